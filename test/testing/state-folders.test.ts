/**
 * Where a test bot's state lives: a temporary folder that `stop()` keeps (for `start()`),
 * `stop({ wipe: true })` deletes, and the process removes at its exit when no test wiped it. Run
 * in a child process (the built package) with its own TMPDIR, so the folders seen are its own.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { assertBuilt, repoRoot } from "../support/cli.ts";

const run = promisify(execFile);

const SCRIPT = `
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { defineBot } from "bothost";
import { runBot, startSandbox } from "bothost/testing";
const folders = () => readdirSync(tmpdir()).filter((f) => f.startsWith("bothost-testbot-")).length;
const sandbox = await startSandbox();
const quiet = defineBot({ setup: () => {} });
const kept = await runBot(sandbox, { bot: quiet, name: "kept" });
const wiped = await runBot(sandbox, { bot: quiet, name: "wiped" });
await kept.stop();
await wiped.stop({ wipe: true });
console.log(JSON.stringify({ afterStops: folders() }));
await sandbox.stop();
`;

it("stop() keeps the folder, wipe deletes it, and the process's exit removes what is left", async () => {
  assertBuilt();
  const tmp = await mkdtemp(path.join(tmpdir(), "bothost-kit-tmp-"));
  try {
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", SCRIPT], {
      cwd: repoRoot,
      env: { ...process.env, TMPDIR: tmp },
    });
    expect(JSON.parse(stdout.trim().split("\n").pop()!)).toEqual({ afterStops: 1 });
    expect((await readdir(tmp)).filter((f) => f.startsWith("bothost-testbot-"))).toEqual([]);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});
