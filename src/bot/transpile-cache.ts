/**
 * Where the JavaScript made of TypeScript bot modules is kept, so that a start, `check` or reload
 * whose modules did not change skips the transform (babel) altogether. Per user, never next to
 * the user's files or in node_modules: `$XDG_CACHE_HOME/bothost/…`, else `~/.cache/bothost/…`.
 * An entry is named by a hash of everything the transform is given (the source, the file's path,
 * the options), so an edited module is transformed again, and written whole under a temporary
 * name then renamed: two processes making it at once, or one killed meanwhile, never leave a torn
 * entry for the next to run.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import type { TransformOptions, TransformResult } from "jiti";

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
 * What `make` gives for `options`, taken from `dir` when an earlier process made it; else made,
 * and kept there (a failed write is no error: the cache is only a saving). A transform that
 * failed (a syntax error jiti reports in its code) is not kept.
 */
export function cachedTransform(
  dir: string,
  options: TransformOptions,
  make: () => TransformResult,
): TransformResult {
  const { source, ...rest } = options;
  const key = createHash("sha256").update(JSON.stringify(rest)).update("\0").update(source).digest("hex");
  const file = path.join(dir, `${key}.js`);
  try {
    return { code: readFileSync(file, "utf8") };
  } catch {
    // Not made yet (or unreadable): made below.
  }
  const made = make();
  if (made.error === undefined && !made.code.includes("__JITI_ERROR__")) {
    const temporary = `${file}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
    try {
      writeFileSync(temporary, made.code, { mode: 0o600 });
      renameSync(temporary, file);
    } catch {
      rmSync(temporary, { force: true });
    }
  }
  return made;
}
