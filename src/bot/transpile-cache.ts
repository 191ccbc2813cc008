/**
 * Where jiti keeps the JavaScript it made of TypeScript bot modules, so that a start, `check` or
 * reload whose modules did not change skips the transform (babel) altogether. Per user, never next
 * to the user's files or in node_modules: `$XDG_CACHE_HOME/bothost/…`, else `~/.cache/bothost/…`.
 * jiti names an entry after the module's path and keeps it only while it ends with a hash of the
 * source it was made from, so an edited module is transformed again.
 */
import { accessSync, constants, lstatSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** The error codes of a write that failed for want of room or a writable disk. */
const STORAGE_FULL = new Set(["ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EIO"]);

/**
 * The cache folder for entries made by the jiti whose package.json is `jitiPackageJson`, created
 * (0700) if missing; false when it cannot be used: no home folder, a folder that cannot be
 * written, or one that is not the current user's own or that others may write to (an entry
 * someone else can write would be code run as this user). Never throws.
 */
export function transpileCacheDir(
  jitiPackageJson: string,
  env: NodeJS.ProcessEnv = process.env,
): string | false {
  try {
    const uid = process.getuid?.();
    if (uid === undefined) return false;
    const base = cacheHome(env);
    if (base === undefined) return false;
    const { version } = JSON.parse(readFileSync(jitiPackageJson, "utf8")) as { version: string };
    mkdirSync(base, { recursive: true, mode: 0o700 });
    let dir = base;
    // Each folder checked before anything is made in it. The last is named after jiti's version:
    // another one may transform the same source differently.
    for (const name of ["bothost", "transpiled", `jiti-${version}`]) {
      dir = path.join(dir, name);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const s = lstatSync(dir);
      if (!s.isDirectory() || s.uid !== uid || (s.mode & 0o022) !== 0) return false;
    }
    accessSync(dir, constants.W_OK);
    return dir;
  } catch {
    return false;
  }
}

/** `$XDG_CACHE_HOME` when it is an absolute path (the XDG spec ignores others), else `$HOME/.cache`. */
function cacheHome(env: NodeJS.ProcessEnv): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && path.isAbsolute(xdg)) return xdg;
  const home = env.HOME;
  return home && path.isAbsolute(home) ? path.join(home, ".cache") : undefined;
}

/**
 * True when `err` is jiti failing to write an entry into `dir` (a full disk, a folder removed or
 * made read-only meanwhile): the module is then loaded again with the cache off. A failed write
 * is recognised by a storage error code, or by an error on a path inside `dir`.
 */
export function isCacheWriteError(err: unknown, dir: string): boolean {
  const { code, path: at } = (err ?? {}) as { code?: unknown; path?: unknown };
  if (typeof code !== "string") return false;
  if (STORAGE_FULL.has(code)) return true;
  return typeof at === "string" && path.dirname(at) === dir;
}
