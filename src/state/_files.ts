/** The files of the embedded store: atomic replacement and the directory lock. */
import { randomBytes } from "node:crypto";
import { link, open, readFile, rename, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { monotonicMs, realClock } from "../time/clock.ts";
import { bootId, isZombie, pidNamespace, startTicks } from "./proc-identity.ts";
import { StateError } from "./state-error.ts";

/** Temp files are named `.<target>.<pid>.<random>.tmp`, so leftovers can be found and removed. */
export function isTempFileOf(fileName: string, target: string): boolean {
  return fileName.startsWith(`.${target}.`) && fileName.endsWith(".tmp");
}

/**
 * Replace a file so that a crash at any moment leaves either the old or the new content, never a
 * mix: write a temp file in the same directory, fsync it, rename it over the target (atomic on
 * POSIX file systems), then fsync the directory so the rename itself survives a power cut.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    await writeNewFile(tmp, data);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDirectory(dirname(file));
}

/** Create `file` (failing if it exists) with `data`, fsynced. */
export async function writeNewFile(file: string, data: string): Promise<void> {
  const handle = await open(file, "wx", 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync a directory so renames and new entries in it are durable. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (err) {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is still atomic there.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL" && code !== "EACCES") throw err;
  } finally {
    await handle?.close();
  }
}

/** The file's bytes, or `undefined` when it does not exist. */
export async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * One process at a time per state directory, enforced by a `LOCK` file holding the owner's pid
 * and host, and what it is: a daemon (no `command`), which holds it as long as it runs, or a
 * short-lived command (`bothost dialogs`, the store opened with no daemon answering). A daemon's
 * lock is refused at once; a command's is waited for, {@link COMMAND_WAIT_MS} by default.
 *
 * The lock file is created with `link()` from a fully written temp file, so it appears atomically
 * with its content (no reader ever sees it half-written) and creation fails if it already exists.
 * A lock whose pid is dead on this host, or a zombie (exited, not yet reaped), or a later process
 * of its pid (another boot, other start ticks, this very process when it did not take it), is
 * stale: it is moved aside with `rename()` (atomic, so two contenders cannot both move it) and the acquisition
 * retried. Not safe on network file systems.
 */
export interface LockInfo {
  pid: number;
  hostname: string;
  startedAt: string;
  /** The taker's start in clock ticks since boot (Linux), to know it from a later process of its pid. */
  ticks?: number;
  /** The taker's pid namespace (Linux: `pid:[…]`), to know a container's pid from the host's. */
  pidns?: string;
  /** The host's boot the taker ran in (Linux), to know a lock left before a reboot. */
  boot?: string;
  /** Unique to the taking, to know a lock this process took from one an earlier process of its pid left. */
  nonce?: string;
  /** Set when a short-lived command holds it (`bothost dialogs`); a daemon's lock has none. */
  command?: string;
}

/**
 * The nonces of the locks this process holds, shared by every copy of this module loaded in it
 * (in one thread: a worker thread has a global object of its own).
 * A LOCK naming this process's pid is held only if listed here: one this process did not take was
 * left by an earlier process of the same pid (a container's PID 1 restarted after a kill -9, a
 * service started at boot with the pid it had before).
 */
const heldHere: Set<string> = sharedSet(Symbol.for("bothost.state.heldLocks"));

function sharedSet(key: symbol): Set<string> {
  const slots = globalThis as { [key: symbol]: Set<string> | undefined };
  const set = slots[key] ?? new Set<string>();
  slots[key] = set;
  return set;
}

const ATTEMPTS = 5;
/** How long a lock held by a command is waited for by default before the directory is refused. */
export const COMMAND_WAIT_MS = 5_000;
/** Logged (info) when the lock is found held by a command, which is waited for. */
export const COMMAND_WAIT_LINE = "the state directory is held by a bothost command: waiting for it to end";

/** Where a wait for a command's lock is said (a pino logger fits; without `info`, `warn` says it). */
export interface WaitLog {
  warn(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
}

/** The pauses between looks at a command's lock grow from the first to the last. */
const FIRST_PAUSE_MS = 10;
const LAST_PAUSE_MS = 200;

/**
 * Asked of a LOCK naming this process's pid that neither this process took nor its start matches:
 * true when a live process elsewhere holds the directory (a sibling container of the same
 * hostname whose daemon is PID 1 too, say); false when it was left by an earlier process of that
 * pid (a container's PID 1 restarted), which is the answer without it.
 */
export type HeldElsewhere = () => Promise<boolean>;

/**
 * Acquire the directory's lock, for `command` (a short-lived command's name) or, without it, for
 * a daemon, waiting up to `waitMs` for a command holding it (said once to `log`, as
 * {@link COMMAND_WAIT_LINE}); resolves a function that releases it.
 */
export async function acquireLock(
  dir: string,
  heldElsewhere?: HeldElsewhere,
  command?: string,
  waitMs = COMMAND_WAIT_MS,
  log?: WaitLog,
): Promise<() => Promise<void>> {
  const lockPath = join(dir, "LOCK");
  const suffix = `${process.pid}.${randomBytes(4).toString("hex")}`;
  const me = { ticks: await startTicks(process.pid), pidns: await pidNamespace(), boot: await bootId() };
  const what = command === undefined ? {} : { command };
  const mine = `${JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString(), ...me, nonce: suffix, ...what })}\n`;
  const tmp = join(dir, `.LOCK.${suffix}.tmp`);
  await writeNewFile(tmp, mine);
  heldHere.add(suffix); // before the link: another open in this process may read the LOCK at once
  let taken = false;
  const waitUntil = monotonicMs() + waitMs;
  let pause = FIRST_PAUSE_MS;
  let told = false;
  try {
    // Attempts count the takeovers of stale locks (and, once the wait is over, the releases met):
    // contenders moving each other's locks aside do not go on forever.
    for (let attempt = 0; attempt < ATTEMPTS; ) {
      try {
        await link(tmp, lockPath);
        taken = true;
        return () => releaseLock(lockPath, mine, suffix);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const text = (await readIfExists(lockPath))?.toString();
      if (text === undefined) {
        // Released meanwhile: another waiter may have taken it first.
        if (monotonicMs() >= waitUntil) attempt++;
        continue;
      }
      const holder = parseLock(text);
      if (holder === undefined) {
        throw new StateError(
          "STATE_LOCKED",
          `State directory ${dir} has a LOCK file bothost cannot read. If no bothost daemon uses this directory, delete ${lockPath}.`,
        );
      }
      if (await isAlive(holder, heldElsewhere)) {
        const left = waitUntil - monotonicMs();
        if (holder.command === undefined || left <= 0) throw lockedError(dir, lockPath, holder, waitMs);
        // A command holds it for a moment (it reads or writes a few keys, then closes the store).
        if (!told) {
          const seen = { dir, command: holder.command, pid: holder.pid, host: holder.hostname, waitMs };
          (log?.info ?? log?.warn)?.call(log, seen, COMMAND_WAIT_LINE);
        }
        told = true;
        // Real time: the holder is another process, which no test clock moves.
        await new Promise<void>((resolve) => realClock.setTimeout(resolve, Math.min(pause, left)));
        pause = Math.min(pause * 2, LAST_PAUSE_MS);
        continue;
      }
      attempt++;
      await moveAsideIfUnchanged(lockPath, text, join(dir, `.LOCK.stale.${suffix}`));
    }
    throw new StateError(
      "STATE_LOCKED",
      `Could not take the lock of state directory ${dir}: other processes keep competing for it. Make sure only one bothost daemon uses this directory.`,
    );
  } finally {
    if (!taken) heldHere.delete(suffix);
    await rm(tmp, { force: true });
  }
}

async function releaseLock(lockPath: string, mine: string, nonce: string): Promise<void> {
  // Only remove the lock if it is still ours (it may have been broken by hand and retaken).
  if ((await readIfExists(lockPath))?.toString() === mine) await rm(lockPath, { force: true });
  heldHere.delete(nonce);
}

async function moveAsideIfUnchanged(lockPath: string, staleText: string, aside: string): Promise<void> {
  try {
    await rename(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if ((await readIfExists(aside))?.toString() !== staleText) {
    // A contender replaced the stale lock between our read and our rename: give its lock back.
    await link(aside, lockPath).catch(() => {});
  }
  await rm(aside, { force: true });
}

async function isAlive(holder: LockInfo, heldElsewhere: HeldElsewhere | undefined): Promise<boolean> {
  if (holder.hostname !== hostname()) return true; // cannot check a pid on another host
  // Taken before the host's last boot: its taker is gone, whatever process has its pid now (this
  // very one, say, started at boot as it was before).
  const boot = holder.boot === undefined ? undefined : await bootId();
  if (boot !== undefined && boot !== holder.boot) return false;
  // This very pid: held only if this process took it (it opened the store already, in this
  // thread or another); otherwise whatever pid namespace or ticks the LOCK names, it was left by an
  // earlier process (a restarted container's new namespace has pid 1 again).
  if (holder.pid === process.pid) {
    if (heldHere.has(holder.nonce ?? "") || (await isThisProcess(holder))) return true;
    return (await heldElsewhere?.()) ?? false;
  }
  // In this pid namespace, a process of the lock's pid that started at other ticks is not its taker.
  if (holder.ticks !== undefined && holder.pidns !== undefined && holder.pidns === (await pidNamespace())) {
    const ticks = await startTicks(holder.pid);
    if (ticks !== undefined && ticks !== holder.ticks) return false;
  }
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // alive, owned by another user
  }
  return !(await isZombie(holder.pid));
}

/**
 * The LOCK names this process's start (its ticks in this boot and pid namespace): another thread
 * of it took the lock, whose copy of the module keeps its own set of nonces.
 */
async function isThisProcess(holder: LockInfo): Promise<boolean> {
  if (holder.boot === undefined || holder.ticks === undefined || holder.pidns === undefined) return false;
  const [boot, ticks, pidns] = [await bootId(), await startTicks(process.pid), await pidNamespace()];
  return holder.boot === boot && holder.ticks === ticks && holder.pidns === pidns;
}

function lockedError(dir: string, lockPath: string, holder: LockInfo, waitedMs: number): StateError {
  if (holder.command !== undefined) {
    return new StateError(
      "STATE_LOCKED",
      `State directory ${dir} is in use by the command ${holder.command} (pid ${holder.pid} on ${holder.hostname}, since ${holder.startedAt}), which did not end within ${waitedMs / 1000} s. Try again once it has ended. If that process is not a bothost command, delete ${lockPath}.`,
      { heldBy: "command" },
    );
  }
  const who =
    holder.pid !== process.pid
      ? `pid ${holder.pid} on ${holder.hostname}`
      : heldHere.has(holder.nonce ?? "")
        ? "this process"
        : `another process of pid ${holder.pid} on ${holder.hostname} (another container?)`;
  return new StateError(
    "STATE_LOCKED",
    `State directory ${dir} is in use by ${who} (since ${holder.startedAt}). Stop that daemon or give this one a different state.path. If that process is not a bothost daemon, delete ${lockPath}.`,
    { heldBy: "daemon" },
  );
}

export function parseLock(text: string): LockInfo | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockInfo>;
    if (Number.isSafeInteger(value.pid) && (value.pid as number) > 0 && typeof value.hostname === "string") {
      const ticks = Number.isSafeInteger(value.ticks) ? { ticks: value.ticks as number } : {};
      const pidns = typeof value.pidns === "string" ? { pidns: value.pidns } : {};
      const boot = typeof value.boot === "string" ? { boot: value.boot } : {};
      const nonce = typeof value.nonce === "string" ? { nonce: value.nonce } : {};
      const command = typeof value.command === "string" ? { command: value.command } : {};
      return {
        pid: value.pid as number,
        hostname: value.hostname,
        startedAt: String(value.startedAt),
        ...ticks,
        ...pidns,
        ...boot,
        ...nonce,
        ...command,
      };
    }
  } catch {}
  return undefined;
}
