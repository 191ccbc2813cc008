/**
 * Reading small files named by the config (key files, zuliprc) with a size cap and plain errors.
 */
import { open } from "node:fs/promises";

/** The file's text, or why it could not be read (a sentence fragment naming no contents). */
export type ReadResult = { readonly text: string } | { readonly error: string; readonly missing: boolean };

/**
 * Reads a regular file of at most `maxBytes` bytes.
 */
export async function readTextFile(file: string, maxBytes: number): Promise<ReadResult> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, "r");
  } catch (err) {
    return describeError(err);
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) return { error: "it is a folder, not a file", missing: false };
    // Devices and pipes can block or never end (/dev/zero); only plain files are read.
    if (!stat.isFile()) return { error: "it is not a regular file", missing: false };
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes + 1, 0);
    if (bytesRead > maxBytes) return { error: `it is larger than ${maxBytes} bytes`, missing: false };
    return { text: buffer.subarray(0, bytesRead).toString("utf8") };
  } catch (err) {
    return describeError(err);
  } finally {
    await handle.close();
  }
}

function describeError(err: unknown): { error: string; missing: boolean } {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return { error: "there is no such file", missing: true };
  if (code === "EACCES" || code === "EPERM") return { error: "permission denied", missing: false };
  if (code === "EISDIR") return { error: "it is a folder, not a file", missing: false };
  return { error: code ?? "it could not be read", missing: false };
}
