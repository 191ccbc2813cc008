/**
 * bothost's per-user cache folders: `$XDG_CACHE_HOME/bothost/…`, else `~/.cache/bothost/…`, never
 * next to the user's files or in node_modules. Shared by the transpile cache of TypeScript bot
 * modules and the CLI's compile cache (V8's code of the modules it loads).
 */
import { accessSync, constants, lstatSync } from "node:fs";
import path from "node:path";
import { makeDirsSync } from "../state/make-dirs.ts";

/**
 * `bothost/<names…>` under the cache home, each folder created (0700) if missing; false when it
 * cannot be used: no home folder, a folder that cannot be written, or one that is not the current
 * user's own or that others may write to (an entry someone else can write would be code run as
 * this user). Never throws.
 */
export function userCacheDir(names: readonly string[], env: NodeJS.ProcessEnv = process.env): string | false {
  try {
    const uid = process.getuid?.();
    if (uid === undefined) return false;
    const base = cacheHome(env);
    if (base === undefined) return false;
    makeDirsSync(base, 0o700);
    let dir = base;
    // Each folder checked before anything is made in it.
    for (const name of ["bothost", ...names]) {
      dir = path.join(dir, name);
      makeDirsSync(dir, 0o700);
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
