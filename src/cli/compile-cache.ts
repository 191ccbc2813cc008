/**
 * The compile cache of the CLI's processes: on Node.js lines that have `module.enableCompileCache`
 * (22.1 and later), V8's compiled code of each module loaded is kept on disk, so that a later start
 * whose modules did not change skips compiling them. Node.js checks each entry against the module's
 * source and its own version, writes entries whole (a temporary file renamed) and keeps each
 * version's entries apart, so processes sharing the folder (two instances, `bothost dev` restarts)
 * are safe. On Node.js 20 nothing happens.
 */
import module from "node:module";
import { userCacheDir } from "../bot/cache-folder.ts";

/** The part of `node:module` this uses, present on Node.js 22.1+ (typed for Node.js 20 here). */
interface CompileCacheApi {
  enableCompileCache?: (directory: string) => { status: number; message?: string; directory?: string };
}

/**
 * Turns the compile cache on in `bothost/compiled/` of the user's cache folder (the checks of
 * `userCacheDir`), unless this Node.js has none, or the user's own `NODE_COMPILE_CACHE` (Node.js
 * then caches there already) or `NODE_DISABLE_COMPILE_CACHE` is set. A folder that cannot be used
 * leaves it off: a start goes on without it. Never throws. The folder used, or undefined.
 */
export function enableCompileCache(
  env: NodeJS.ProcessEnv = process.env,
  api: CompileCacheApi = module as CompileCacheApi,
): string | undefined {
  if (typeof api.enableCompileCache !== "function") return undefined;
  if (env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const dir = userCacheDir(["compiled"], env);
  if (dir === false) return undefined;
  try {
    // ENABLED, or FAILED with a message (a folder Node.js could not make): neither stops a start.
    return api.enableCompileCache(dir).directory;
  } catch {
    return undefined;
  }
}
