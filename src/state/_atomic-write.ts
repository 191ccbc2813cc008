/**
 * Replace a file so that a crash at any moment leaves either the old or the new content, never a
 * mix: write a temp file in the same directory, fsync it, rename it over the target (atomic on
 * POSIX file systems), then fsync the directory so the rename itself survives a power cut.
 */
import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Temp files are named `.<target>.<pid>.<random>.tmp`, so leftovers can be found and removed. */
export function isTempFileOf(fileName: string, target: string): boolean {
  return fileName.startsWith(`.${target}.`) && fileName.endsWith(".tmp");
}

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
