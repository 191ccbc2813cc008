/**
 * What tells one Linux process apart from another that got its pid later, whatever the wall
 * clock did meanwhile: its start time in clock ticks since boot (field 22 of /proc/<pid>/stat),
 * the boot it is of (ticks start again at every boot), and the pid namespace its pid belongs to
 * (a container has its own).
 */
import { readFile, readlink } from "node:fs/promises";

/** `pid`'s start, in clock ticks since boot, as /proc says it; undefined where /proc is absent. */
export async function startTicks(pid: number): Promise<number | undefined> {
  try {
    const stat = (await readFile(`/proc/${pid}/stat`, "utf8")).trim();
    // Fields after "(<command>)": the state is field 3, the start time field 22.
    const field = stat
      .slice(stat.lastIndexOf(")") + 1)
      .trim()
      .split(/\s+/)[19];
    const ticks = Number(field);
    return field !== undefined && Number.isSafeInteger(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

/** This boot of the host's kernel (a new one at every boot); undefined where /proc does not say. */
export async function bootId(): Promise<string | undefined> {
  const id = await readFile("/proc/sys/kernel/random/boot_id", "utf8").catch(() => "");
  return id.trim() || undefined;
}

/** This process's pid namespace (`pid:[4026531836]`); undefined where /proc does not say. */
export async function pidNamespace(): Promise<string | undefined> {
  return readlink("/proc/self/ns/pid").catch(() => undefined);
}

/**
 * Whether `pid` has exited but its parent has not reaped it yet (Linux: state Z or X in
 * /proc/<pid>/stat). Such a process still answers `kill(pid, 0)`, for a moment after a `kill -9`
 * or for good under a parent that never waits, yet holds nothing. `false` where /proc is absent.
 */
export async function isZombie(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (stat === undefined) return false;
  // "<pid> (<command>) <state> …": the command may hold spaces and parentheses, so read after the last ")".
  const state = stat.slice(stat.lastIndexOf(")") + 1).trim()[0];
  return state === "Z" || state === "X";
}
