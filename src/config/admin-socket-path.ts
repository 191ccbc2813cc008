/**
 * Where a daemon's admin socket is: the daemon listens there and `bothost status`, `reload` and
 * `failed` connect there, both working it out from the config's state location alone.
 *
 * - `state.path`: `<state.path>/admin.sock`, inside the state directory (mode 0700).
 * - `state.redis`, or a state directory whose path is too long for a socket (the kernel limits
 *   socket paths to about 100 bytes): `<tmpdir>/bothost-<uid>/<hash>.sock`, in a folder only the
 *   user can enter; the hash is of the state directory, or of the config file for Redis.
 * - Windows: a named pipe, `\\.\pipe\bothost-<hash>`.
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** The socket's file name inside the state directory. */
export const ADMIN_SOCKET_NAME = "admin.sock";

/** Longest socket path, in bytes, that Linux (107) and macOS (103) both accept. */
export const MAX_SOCKET_PATH_BYTES = 103;

/** Where the daemon keeps its state, as the admin socket's location depends on it. */
export type StateLocation = { path: string } | { redis: true; configFile: string };

/** The admin socket's path for a daemon whose state is at `state` (an absolute `path`). */
export function adminSocketPath(state: StateLocation, platform = process.platform): string {
  const key = "path" in state ? path.resolve(state.path) : canonical(state.configFile);
  if (platform === "win32") return `\\\\.\\pipe\\bothost-${hashOf(key)}`;
  if ("path" in state) {
    const inside = path.join(key, ADMIN_SOCKET_NAME);
    if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH_BYTES) return inside;
  }
  return path.join(runtimeDir(), `${hashOf(key)}.sock`);
}

/** The per-user folder for sockets that cannot live in a state directory. */
export function runtimeDir(): string {
  return path.join(tmpdir(), `bothost-${process.getuid?.() ?? "user"}`);
}

/** True when `socket` is in {@link runtimeDir} (the daemon makes that folder first). */
export function isInRuntimeDir(socket: string): boolean {
  return path.dirname(socket) === runtimeDir();
}

// The same file reached through a symlink or a relative path gives the same socket.
function canonical(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

function hashOf(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}
