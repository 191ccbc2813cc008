/**
 * `mkdir -p`, one level at a time. Node's `recursive` mkdir never returns where the file system
 * refuses the last level with ENOENT though its parent exists (a path under /proc or /sys): it
 * creates the parent again and again, and the process hangs. Here that refusal is thrown, like any
 * other. A path that exists as anything but a directory throws EEXIST, as the recursive mkdir does.
 */
import { mkdirSync, statSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

export async function makeDirs(dir: string, mode = 0o777): Promise<void> {
  const made = async () => {
    try {
      await mkdir(dir, { mode });
    } catch (err) {
      if (code(err) !== "EEXIST" || !(await stat(dir)).isDirectory()) throw err;
    }
  };
  try {
    return await made();
  } catch (err) {
    if (code(err) !== "ENOENT" || dirname(dir) === dir) throw err;
  }
  await makeDirs(dirname(dir), mode);
  await made();
}

export function makeDirsSync(dir: string, mode = 0o777): void {
  const made = () => {
    try {
      mkdirSync(dir, { mode });
    } catch (err) {
      if (code(err) !== "EEXIST" || !statSync(dir).isDirectory()) throw err;
    }
  };
  try {
    made();
    return;
  } catch (err) {
    if (code(err) !== "ENOENT" || dirname(dir) === dir) throw err;
  }
  makeDirsSync(dirname(dir), mode);
  made();
}
