/**
 * `bothost run` started while a `bothost dialogs` or `failed` with no daemon answering holds the
 * state directory for a moment: the daemon waits for that command to release it, then takes the
 * directory and starts, rather than exiting 1 with STATE_LOCKED. It says that it waits, and for
 * which command. The daemon is the built CLI on the embedded sandbox; the command's hold is the
 * store opened as that command, in this process.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { COMMAND_WAIT_LINE } from "../../src/state/_files.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { assertBuilt, killAll, repoRoot, spawnCli } from "../support/cli.ts";

const BOT = "echo-bot@sandbox.example";
let dir: string | undefined;
beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("bothost run meeting a command's lock waits for it, then starts", { timeout: 30_000 }, async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-run-waits-"));
  const state = path.join(dir, "state");
  await mkdir(state);
  await writeFile(
    path.join(dir, "org.yaml"),
    `realm: { name: Local, host: sandbox.example }\nusers:\n  - { email: owner@sandbox.example, full_name: Olive Owner, role: owner }\n` +
      `bots:\n  - { email: ${BOT}, full_name: Echo Bot, owner: owner@sandbox.example }\nchannels: []\n`,
  );
  const file = path.join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: sandbox\n  sandbox:\n    port: 0\n    org: ./org.yaml\nstate:\n  path: ${state}\nlog:\n  level: info\n  pretty: false\n` +
      `bots:\n  echo:\n    module: ${path.join(repoRoot, "bots/echo.ts")}\n    email: ${BOT}\n`,
  );
  const command = await FileStore.open(state, { command: "bothost dialogs" });
  const daemon = spawnCli(["run", "-c", file]);
  try {
    const waiting = await daemon.waitForLog((l) => l.msg === COMMAND_WAIT_LINE);
    expect(waiting).toMatchObject({ level: 30, command: "bothost dialogs", pid: process.pid, waitMs: 5000 });
  } finally {
    await command.close();
  }
  await daemon.waitForLog((l) => l.msg === "daemon started");
  expect(daemon.stderr()).not.toContain("STATE_LOCKED");
  // The directory is the daemon's now: its lock names its pid and no command.
  const lock = JSON.parse(await readFile(path.join(state, "LOCK"), "utf8")) as Record<string, unknown>;
  expect(lock.pid).toBe(daemon.pid);
  expect(lock.command).toBeUndefined();
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
});
