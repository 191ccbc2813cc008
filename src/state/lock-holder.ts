/**
 * Which process a signal meant for the daemon holding a state directory may go to. `bothost
 * reload` falls back to SIGHUP when no admin channel answers; a `LOCK` left by a daemon that was
 * killed (or that runs on another host sharing the directory) names a pid that is not that daemon
 * here, and SIGHUP ends most processes.
 */
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { isZombie, type LockInfo, parseLock, readIfExists } from "./_files.ts";

/** The daemon's pid on this host, or why the lock names none to signal. */
export type LockHolder = { pid: number } | { none: string };

/** Clock ticks a second in /proc/<pid>/stat's start time (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;
/** Slack for the precision of the boot time (whole seconds) and of the lock's time. */
const SLACK_MS = 2_000;

/** The live process on this host that took `dir`'s lock, or why there is none. */
export async function lockHolderHere(dir: string): Promise<LockHolder> {
  const lockPath = join(dir, "LOCK");
  const text = (await readIfExists(lockPath))?.toString();
  const holder = text === undefined ? undefined : parseLock(text);
  if (holder === undefined) return { none: `${lockPath} names no daemon` };
  const named = `${lockPath} names pid ${holder.pid} on ${holder.hostname}`;
  if (holder.hostname !== hostname()) return { none: `${named}, not this host (${hostname()})` };
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return { none: `${named}, which is not running` };
  }
  if (await isZombie(holder.pid)) return { none: `${named}, which is not running` };
  const started = await startTime(holder.pid);
  if (started !== undefined && started > Date.parse(holder.startedAt) + SLACK_MS) {
    return { none: `${named}, a process started after that lock was taken (its pid reused)` };
  }
  return { pid: holder.pid };
}

/** When `pid` started (ms since the epoch), from /proc; undefined where /proc is absent. */
async function startTime(pid: LockInfo["pid"]): Promise<number | undefined> {
  try {
    const stat = (await readFile(`/proc/${pid}/stat`, "utf8")).trim();
    const boot = /^btime (\d+)$/m.exec(await readFile("/proc/stat", "utf8"));
    // Fields after "(<command>)": the state is field 3, the start time (ticks since boot) field 22.
    const ticks = Number(
      stat
        .slice(stat.lastIndexOf(")") + 1)
        .trim()
        .split(/\s+/)[19],
    );
    if (!boot || !Number.isFinite(ticks)) return undefined;
    return Number(boot[1]) * 1000 + (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
