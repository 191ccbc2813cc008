/**
 * An operator and a dialog, through real processes: `bothost run` asks the member two questions,
 * `bothost status --json` and `bothost dialogs` (subprocesses, over the daemon's admin socket) show
 * the dialog at step 2, `bothost dialogs end` ends it (the member is told, the dialog's state write
 * is never made, the next message is an ordinary one), and it stays ended after a restart. On the
 * file store, and on Redis when one answers (else skipped with one line saying why).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runCli, spawnCli } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import {
  botEmail,
  botSaid,
  orgWithBots,
  sayToBot as say,
  startE2eSandbox,
  useE2eCleanup,
} from "../support/e2e-daemon.ts";

const BOT = path.join(repoRoot, "test/fixtures/e2e/standup-dialog.mjs");

useE2eCleanup();

const backends = await crashBackends("dialog-operator");

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("status shows the dialog at its step; dialogs end ends it for good", { timeout: 90_000 }, async () => {
    const sandbox = await startE2eSandbox(orgWithBots(1));
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-dialog-operator-"));
    const backend = backendFor(dir);
    const file = path.join(dir, "bothost.yaml");
    await writeFile(
      file,
      [
        `server:\n  url: ${sandbox.url}`,
        backend.yaml,
        "log:\n  level: debug\n  pretty: false",
        "bots:",
        `  standup:\n    module: ${BOT}\n    email: ${botEmail(0)}\n    api_key: \${E2E_KEY}\n`,
      ].join("\n"),
    );
    const env = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
    const start = async () => {
      const daemon = spawnCli(["run", "--config", file], { env });
      await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
      return daemon;
    };
    const dialogsOf = async () => {
      const r = await runCli(["status", "--json", "-c", file], { env });
      return JSON.parse(r.stdout).bots[0].dialogs;
    };

    let daemon = await start();
    const id = String(say(sandbox, "standup"));
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["Q1 yesterday?"]);
    say(sandbox, "did a");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["Q1 yesterday?", "Q2 today?"]);
    await expect.poll(async () => (await dialogsOf()).list[0]?.deadline, { timeout: 15_000 }).toBeDefined();

    const dialogs = await dialogsOf();
    expect(dialogs).toMatchObject({
      waiting: 1,
      list: [{ id, userName: "Mel Member", where: "direct message", step: 2 }],
    });
    const listed = await runCli(["dialogs", "-c", file], { env });
    expect(listed.stdout).toMatch(
      new RegExp(`^ {2}${id} +Mel Member +direct message +2 +\\S+Z +\\S+Z$`, "m"),
    );

    const ended = await runCli(["dialogs", "end", "standup", id, "-c", file], { env });
    expect(ended).toMatchObject({ code: 0, stderr: "" });
    await expect.poll(() => botSaid(sandbox).at(-1)).toBe("An operator ended this conversation.");
    expect(await dialogsOf()).toEqual({ waiting: 0, list: [] });

    // No longer an answer to Q2: an ordinary command.
    say(sandbox, "ping");
    await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe(`pong ${daemon.pid}`);

    // Ended in the store too: a restart does not bring it back.
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    daemon = await start();
    expect(await dialogsOf()).toEqual({ waiting: 0, list: [] });
    say(sandbox, "ping");
    await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe(`pong ${daemon.pid}`);
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(botSaid(sandbox)).toEqual([
      "Q1 yesterday?",
      "Q2 today?",
      "An operator ended this conversation.",
      expect.stringMatching(/^pong /),
      expect.stringMatching(/^pong /),
    ]);
    const store = await backend.open();
    try {
      expect(await store.namespace("standup").namespace("kv").get("done")).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
