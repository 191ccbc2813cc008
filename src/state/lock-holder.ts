/**
 * Which process a signal meant for the daemon holding a state directory may go to. `bothost
 * reload` falls back to SIGHUP when no admin channel answers; a `LOCK` left by a daemon that was
 * killed (or that runs on another host sharing the directory, or in a container) names a pid that
 * is not that daemon here, and SIGHUP ends most processes.
 */
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { parseLock, readIfExists } from "./_files.ts";
import { bootId, isZombie, pidNamespace, startTicks } from "./proc-identity.ts";

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
  // A command opening the store while no daemon answers (`bothost dialogs`): SIGHUP would end it.
  if (holder.command !== undefined) return { none: `${named}, the command ${holder.command}, not a daemon` };
  if (holder.hostname !== hostname()) return { none: `${named}, not this host (${hostname()})` };
  // Ticks start again at every boot: a process of that pid and tick now is another one.
  const boot = holder.boot === undefined ? undefined : await bootId();
  if (boot !== undefined && boot !== holder.boot)
    return { none: `${named}, taken before this host's last boot` };
  // A container with the host's name (host networking) numbers its processes apart.
  const here = await pidNamespace();
  if (holder.pidns !== undefined && here !== undefined && holder.pidns !== here) {
    return { none: `${named}, in another pid namespace (${holder.pidns}, a container; here ${here})` };
  }
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return { none: `${named}, which is not running` };
  }
  if (await isZombie(holder.pid)) return { none: `${named}, which is not running` };
  const reused = `${named}, a process started after that lock was taken (its pid reused)`;
  const ticks = await startTicks(holder.pid);
  // The lock's taker wrote its own start: the same process only if that is this one's, whatever
  // the wall clock did since (a step ahead after the lock moves the start read from btime).
  if (holder.ticks !== undefined && ticks !== undefined)
    return ticks === holder.ticks ? { pid: holder.pid } : { none: reused };
  const started =
    ticks === undefined
      ? undefined
      : await bootTime().then((boot) => boot && boot + (ticks * 1000) / TICKS_PER_SECOND);
  if (started !== undefined && started > Date.parse(holder.startedAt) + SLACK_MS) return { none: reused };
  return { pid: holder.pid };
}

/** When this host booted (ms since the epoch, by the wall clock now), from /proc/stat. */
async function bootTime(): Promise<number | undefined> {
  const boot = /^btime (\d+)$/m.exec(await readFile("/proc/stat", "utf8").catch(() => ""));
  return boot ? Number(boot[1]) * 1000 : undefined;
}
