/**
 * Durable dialogs through real processes: `bothost run` killed with SIGKILL after each message of
 * a three-question dialog (at once, and a few ms later), stopped with SIGTERM while a question
 * waits and answered while no daemon runs, with a handler timeout far shorter than the wait. Each
 * question is asked once, each answer lands under its question, the dialog's state write is made
 * once. On the file store, and on Redis when one answers (else skipped with one line saying why).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliProcess, repoRoot, spawnCli } from "../support/cli.ts";
import { type Backend, crashBackends } from "../support/crash-backends.ts";
import {
  botEmail,
  botSaid,
  orgWithBots,
  sayToBot as say,
  startE2eSandbox,
  useE2eCleanup,
} from "../support/e2e-daemon.ts";

const BOT = path.join(repoRoot, "test/fixtures/e2e/standup-dialog.mjs");
const QUESTIONS = ["Q1 yesterday?", "Q2 today?", "Q3 blockers?"];

useE2eCleanup();

const backends = await crashBackends("dialog-crash");

async function setUp(backendFor: (dir: string) => Backend) {
  const sandbox = await startE2eSandbox(orgWithBots(1));
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-dialog-crash-"));
  const backend = backendFor(dir);
  const file = path.join(dir, "bothost.yaml");
  const yaml = [
    `server:\n  url: ${sandbox.url}`,
    backend.yaml,
    "log:\n  level: debug\n  pretty: false",
    "shutdown_timeout: 5s",
    "longpoll_margin: 1s",
    "bots:",
    `  standup:\n    module: ${BOT}\n    email: ${botEmail(0)}\n    api_key: \${E2E_KEY}`,
    // Far shorter than the waits below: a waiting dialog holds no handler.
    "    handler_timeout: 1s",
  ];
  await writeFile(file, `${yaml.join("\n")}\n`);
  const env = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
  const start = async (): Promise<CliProcess> => {
    const daemon = spawnCli(["run", "--config", file], { env });
    await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
    return daemon;
  };
  return { sandbox, backend, start };
}

async function doneCount(backend: Backend) {
  const store = await backend.open();
  try {
    return await store.namespace("standup").namespace("kv").get("done");
  } finally {
    await store.close();
  }
}

const SUMMARY = "summary: did a | do b | none";

describe.each(backends)("on the %s", (_name, backendFor) => {
  // Each restart on Redis waits for the killed instance's lease (3 s) to expire.
  it.each([0, 25])(
    "SIGKILL %i ms after each message of the dialog: each question once, each answer in place",
    { timeout: 120_000 },
    async (delayMs) => {
      {
        const { sandbox, backend, start } = await setUp(backendFor);
        const said = ["standup", "did a", "do b", "none"];
        let daemon = await start();
        for (const [i, text] of said.entries()) {
          say(sandbox, text);
          if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
          daemon.kill("SIGKILL");
          await daemon.exited;
          daemon = await start();
          const expected = [...QUESTIONS.slice(0, i + 1), ...(i === 3 ? [SUMMARY] : [])];
          await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(expected);
        }
        // The summary may be the killed daemon's, its end left to this one: a message after it
        // in the conversation is handled once the dialog is over.
        say(sandbox, "ping");
        const pong = `pong ${daemon.pid}`;
        await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe(pong);
        daemon.kill("SIGTERM");
        expect(await daemon.exited).toEqual({ code: 0, signal: null });
        expect(botSaid(sandbox)).toEqual([...QUESTIONS, SUMMARY, pong]);
        expect(await doneCount(backend)).toBe(1);
      }
    },
  );

  it("SIGTERM while a question waits; the answer sent while no daemon runs is taken at the next start", {
    timeout: 60_000,
  }, async () => {
    const { sandbox, backend, start } = await setUp(backendFor);
    let daemon = await start();
    say(sandbox, "standup");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 1));
    // Longer than the handler timeout: the dialog does not care.
    await new Promise((r) => setTimeout(r, 1_500));
    say(sandbox, "did a");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 2));
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    say(sandbox, "do b");
    daemon = await start();
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS);
    say(sandbox, "none");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual([...QUESTIONS, SUMMARY]);
    say(sandbox, "ping");
    await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe(`pong ${daemon.pid}`);
    daemon.kill("SIGTERM");
    await daemon.exited;
    expect(await doneCount(backend)).toBe(1);
  });
});
