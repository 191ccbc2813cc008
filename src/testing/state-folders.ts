/**
 * The testing kit's temporary folders (a bot's state, a test daemon's config): removed by
 * `stop({ wipe: true })` or the daemon's stop, else when the process exits. A process that is
 * killed (vitest ends its worker processes with a signal, which runs no exit hook) leaves its
 * folders behind; each name carries the process id, so the next process of the kit that makes one
 * removes the folders of processes no longer running.
 */
import { rmSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const KINDS = ["testbot", "daemon"] as const;
const OWNED = /^bothost-(?:testbot|daemon)-(\d+)-/;

/** Folders not removed yet, removed when the process exits. */
const unwiped = new Set<string>();
let exitHook = false;
let swept: Promise<void> | undefined;

/** A new folder of the kit, kept until {@link wipe} or the process's exit. */
export async function newStateFolder(kind: (typeof KINDS)[number] = "testbot"): Promise<string> {
  swept ??= sweepLeftovers();
  await swept;
  const dir = await mkdtemp(join(tmpdir(), `bothost-${kind}-${process.pid}-`));
  keepUntilExit(dir);
  return dir;
}

function keepUntilExit(dir: string): void {
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const d of unwiped) rmSync(d, { recursive: true, force: true });
    });
  }
  unwiped.add(dir);
}

export async function wipe(dir: string): Promise<void> {
  unwiped.delete(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Removes the kit's folders whose process has ended; a folder that cannot be read is left. */
async function sweepLeftovers(): Promise<void> {
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const pid = OWNED.exec(name)?.[1];
      if (pid === undefined || running(Number(pid))) return;
      await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => {});
    }),
  );
}

/** Whether a process with this id runs (one of another user's counts: it may not be signalled). */
function running(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
