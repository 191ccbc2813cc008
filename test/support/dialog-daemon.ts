/**
 * The durable-dialog crash tests' daemon: `bothost run` with the standup dialog bot
 * (test/fixtures/e2e/standup-dialog.mjs) on the sandbox, its state on a crash backend, and by
 * default a handler timeout far shorter than the waits (a waiting dialog holds no handler).
 */
import { copyFile, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import type { SandboxOptions } from "../../src/sandbox/types.ts";
import { type CliProcess, repoRoot, spawnCli } from "./cli.ts";
import type { Backend } from "./crash-backends.ts";
import { botEmail, botSaid, orgWithBots, sayToBot, startE2eSandbox } from "./e2e-daemon.ts";

export const BOT = path.join(repoRoot, "test/fixtures/e2e/standup-dialog.mjs");
export const QUESTIONS = ["Q1 yesterday?", "Q2 today?", "Q3 blockers?"];
export const SUMMARY = "summary: did a | do b | none";

/**
 * A sandbox and a config for the bot (`module`: a copy of it at `$DIR/…`, for tests that edit
 * it; `handlerTimeout`: its `handler_timeout`; `more`: the sandbox's options, such as
 * `onResponse`; `shutdownTimeout`: its `shutdown_timeout`, the wait before a stop or a reload
 * cuts a run still under way); `start(env)` spawns a daemon and resolves once it started.
 */
export async function setUpDialogDaemon(
  backendFor: (dir: string) => Backend,
  module = BOT,
  handlerTimeout = "1s",
  more: SandboxOptions = {},
  shutdownTimeout = "5s",
) {
  const sandbox = await startE2eSandbox(orgWithBots(1), more);
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-dialog-crash-"));
  if (module !== BOT) await copyFile(BOT, module.replace("$DIR", dir));
  const backend = backendFor(dir);
  const file = path.join(dir, "bothost.yaml");
  const yaml = [
    `server:\n  url: ${sandbox.url}`,
    backend.yaml,
    "log:\n  level: debug\n  pretty: false",
    `shutdown_timeout: ${shutdownTimeout}`,
    "longpoll_margin: 1s",
    "bots:",
    `  standup:\n    module: ${module.replace("$DIR", dir)}\n    email: ${botEmail(0)}\n    api_key: \${E2E_KEY}`,
    `    handler_timeout: ${handlerTimeout}`,
  ];
  await writeFile(file, `${yaml.join("\n")}\n`);
  const key = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
  /** Spawn a daemon; resolves once it started (or, armed to crash early, once it is gone). */
  const spawn = (env: Record<string, string> = {}): CliProcess =>
    spawnCli(["run", "--config", file], { env: { ...key, ...env } });
  const start = async (env: Record<string, string> = {}): Promise<CliProcess> => {
    const daemon = spawn(env);
    await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
    return daemon;
  };
  return { sandbox, backend, start, spawn, dir, file, key };
}

/** How many dialogs the bot counted done in its state. */
export async function doneCount(backend: Backend) {
  const store = await backend.open();
  try {
    return await store.namespace("standup").namespace("kv").get("done");
  } finally {
    await store.close();
  }
}

/**
 * The dialog is over and nothing is left behind: a message after it (the summary may be a killed
 * daemon's, its end left to `daemon`) is answered by `daemon`, which then stops cleanly; the bot
 * said each question once, the summary once, and counted the dialog once.
 */
export async function expectDialogDone(
  sandbox: Awaited<ReturnType<typeof setUpDialogDaemon>>["sandbox"],
  daemon: CliProcess,
  backend: Backend,
  said: readonly string[] = [...QUESTIONS, SUMMARY],
) {
  sayToBot(sandbox, "ping");
  const pong = `pong ${daemon.pid}`;
  await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe(pong);
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
  expect(botSaid(sandbox)).toEqual([...said, pong]);
  expect(await doneCount(backend)).toBe(1);
}
