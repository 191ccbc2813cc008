/**
 * Where a test bot's state lives: a temporary folder that `stop()` keeps (for `start()`),
 * `stop({ wipe: true })` deletes, and the process removes at its exit when no test wiped it. A
 * process killed by a signal (as vitest ends its workers) runs no exit hook: the next process of
 * the kit removes what it left. Run in child processes (the built package) with their own TMPDIR,
 * so the folders seen are theirs.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { assertBuilt, repoRoot } from "../support/cli.ts";

const run = promisify(execFile);

const START = `
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { defineBot } from "bothost";
import { runBot, startSandbox } from "bothost/testing";
const folders = () => readdirSync(tmpdir()).filter((f) => f.startsWith("bothost-")).length;
const sandbox = await startSandbox();
const quiet = defineBot({ setup: () => {} });
`;

const KEEP_AND_WIPE = `${START}
const kept = await runBot(sandbox, { bot: quiet, name: "kept" });
const wiped = await runBot(sandbox, { bot: quiet, name: "wiped" });
await kept.stop();
await wiped.stop({ wipe: true });
console.log(JSON.stringify({ afterStops: folders() }));
await sandbox.stop();
`;

/** Stops its bot without a wipe, then is ended by SIGTERM, as a vitest worker is. */
const KILLED = `${START}
const bot = await runBot(sandbox, { bot: quiet, name: "left" });
await bot.stop();
await sandbox.stop();
process.kill(process.pid, "SIGTERM");
`;

const kitFolders = async (dir: string) => (await readdir(dir)).filter((f) => f.startsWith("bothost-")).sort();

async function inChild(script: string, tmp: string) {
  return await run(process.execPath, ["--input-type=module", "-e", script], {
    cwd: repoRoot,
    env: { ...process.env, TMPDIR: tmp },
  });
}

it("stop() keeps the folder, wipe deletes it, and the process's exit removes what is left", async () => {
  assertBuilt();
  const tmp = await mkdtemp(path.join(tmpdir(), "bothost-kit-tmp-"));
  try {
    const { stdout } = await inChild(KEEP_AND_WIPE, tmp);
    expect(JSON.parse(stdout.trim().split("\n").pop()!)).toEqual({ afterStops: 1 });
    expect(await kitFolders(tmp)).toEqual([]);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});

it("a process killed by a signal leaves its folder; the next one removes it, and no running process's", async () => {
  assertBuilt();
  const tmp = await mkdtemp(path.join(tmpdir(), "bothost-kit-tmp-"));
  // A folder named for this test's own process: it runs, so its folder is not touched.
  const live = `bothost-testbot-${process.pid}-live`;
  await mkdir(path.join(tmp, live));
  try {
    await expect(inChild(KILLED, tmp)).rejects.toMatchObject({ signal: "SIGTERM" });
    const left = (await kitFolders(tmp)).filter((f) => f !== live);
    expect(left).toEqual([expect.stringMatching(/^bothost-testbot-\d+-/)]);
    await inChild(KEEP_AND_WIPE, tmp);
    expect(await kitFolders(tmp)).toEqual([live]);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});
