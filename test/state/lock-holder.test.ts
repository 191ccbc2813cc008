/**
 * `bothost reload` with no admin channel answering sends SIGHUP to the process holding the state
 * directory's lock. A lock held by a command (`bothost dialogs` reading the store while no daemon
 * answers) names no daemon: SIGHUP would end that command.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { lockHolderHere } from "../../src/state/lock-holder.ts";
import { startTicks } from "../../src/state/proc-identity.ts";

it("names no daemon to signal in a lock held by a command, the daemon in one held by a daemon", async () => {
  const dir = await mkdtemp(join(tmpdir(), "bothost-lock-holder-"));
  try {
    const lockPath = join(dir, "LOCK");
    const held = { pid: process.ppid, hostname: hostname(), startedAt: new Date().toISOString() };
    const ticks = await startTicks(process.ppid);
    await writeFile(lockPath, JSON.stringify({ ...held, ticks, command: "bothost dialogs" }));
    expect(await lockHolderHere(dir)).toEqual({
      none: `${lockPath} names pid ${process.ppid} on ${hostname()}, the command bothost dialogs, not a daemon`,
    });
    await writeFile(lockPath, JSON.stringify({ ...held, ticks }));
    expect(await lockHolderHere(dir)).toEqual({ pid: process.ppid });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
