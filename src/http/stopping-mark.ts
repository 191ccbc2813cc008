/**
 * The mark a daemon leaves next to its admin socket while a clean stop drains its handlers: the
 * socket is gone by then, and the admin commands read the mark to say the daemon is stopping
 * (with its pid) rather than that none runs. Removed once the stop is over; one left by a daemon
 * killed meanwhile names a pid no longer running, and the next start removes it.
 */
import { readFile, rm, writeFile } from "node:fs/promises";

const markOf = (socketPath: string) => `${socketPath}.stopping`;

/** Leave the mark of this process's stop (a mark that cannot be written is no reason to stop otherwise). */
export async function markStopping(socketPath: string): Promise<void> {
  await writeFile(markOf(socketPath), `${process.pid}\n`, { mode: 0o600 }).catch(() => {});
}

export async function clearStopping(socketPath: string): Promise<void> {
  await rm(markOf(socketPath), { force: true }).catch(() => {});
}

/** The pid of the live process whose stop the mark next to `socketPath` says, if any. */
export async function stoppingPid(socketPath: string): Promise<number | undefined> {
  const text = await readFile(markOf(socketPath), "utf8").catch(() => undefined);
  const pid = Number(text?.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return undefined;
  }
  return pid;
}
