/**
 * A full disk, portably and without root: this process's file size limit (`prlimit --fsize`)
 * lowered to the size a file has, so each write past it fails for real (EFBIG; the same path as
 * ENOSPC: the write(2) fails). Node ignores SIGXFSZ, so the process goes on. Lift it after the
 * test (`limitFiles("unlimited")`): it holds for every file this process writes.
 */
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";

/** Set this process's file size limit: every write past `bytes` into any file fails. */
export function limitFiles(bytes: number | "unlimited"): void {
  const r = spawnSync("prlimit", ["--pid", String(process.pid), `--fsize=${bytes}:unlimited`]);
  if (r.status !== 0) throw new Error(`prlimit failed: ${r.stderr}`);
}

/** `file` can grow no more (nor any file past its size). */
export function fillDiskAt(file: string): void {
  limitFiles(statSync(file).size);
}
