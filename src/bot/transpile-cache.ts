/**
 * Where the JavaScript made of TypeScript bot modules is kept, so that a start, `check` or reload
 * whose modules did not change skips the transform (babel) altogether. Per user, never next to
 * the user's files or in node_modules: `$XDG_CACHE_HOME/bothost/…`, else `~/.cache/bothost/…`.
 * An entry is named by a hash of everything the transform is given (the source, the file's path,
 * the options), so an edited module is transformed again, and written whole under a temporary
 * name then renamed: two processes making it at once, or one killed meanwhile, never leave a torn
 * entry for the next to run. Entries no start has used for 30 days are removed (see `pruneOnce`).
 */
import { createHash, randomBytes } from "node:crypto";
import {
  lstatSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import type { TransformOptions, TransformResult } from "jiti";
import { userCacheDir } from "./cache-folder.ts";

/**
 * The cache folder for entries made by the jiti whose package.json is `jitiPackageJson`, as
 * `userCacheDir` makes and checks it; false when it cannot be used. The last folder is named after
 * jiti's version: another one may transform the same source differently. Never throws.
 */
export function transpileCacheDir(
  jitiPackageJson: string,
  env: NodeJS.ProcessEnv = process.env,
): string | false {
  let version: string;
  try {
    ({ version } = JSON.parse(readFileSync(jitiPackageJson, "utf8")) as { version: string });
  } catch {
    return false;
  }
  return userCacheDir(["transpiled", `jiti-${version}`], env);
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
    const code = readFileSync(file, "utf8");
    markUsed(file);
    return { code };
  } catch {
    // Not made yet (or unreadable): made below.
  }
  pruneOnce(dir);
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

const DAY_MS = 24 * 60 * 60 * 1000;
/** An entry no load has used for this long is removed: its module was edited or removed since. */
export const UNUSED_FOR_MS = 30 * DAY_MS;
/** A temporary file this old was left by a process killed while writing it. */
const TORN_AFTER_MS = 60 * 60 * 1000;

/**
 * An entry's modification time is when a load last used it, kept to the day: a hit whose entry was
 * last marked more than a day ago marks it again (one `utimes` a day per entry, not one per load).
 */
function markUsed(file: string, now = Date.now()): void {
  try {
    if (now - statSync(file).mtimeMs > DAY_MS) utimesSync(file, now / 1000, now / 1000);
  } catch {
    // Only a saving: an entry not marked is made again after it is pruned.
  }
}

const pruned = new Set<string>();

/**
 * Once per process and folder, at the first transform that was not in the cache (a start whose
 * modules all hit never lists the folder): removes from this jiti's folder and from the folders of
 * other jiti versions (left by an earlier bothost) each entry unused for `UNUSED_FOR_MS` and each
 * temporary file older than an hour, then the other versions' folders left empty. Never throws.
 */
export function pruneOnce(dir: string, now = Date.now()): void {
  if (pruned.has(dir)) return;
  pruned.add(dir);
  const parent = path.dirname(dir);
  let versions: string[];
  try {
    versions = readdirSync(parent).filter((name) => name.startsWith("jiti-"));
  } catch {
    return;
  }
  for (const version of versions) {
    const folder = path.join(parent, version);
    let kept = 0;
    try {
      for (const name of readdirSync(folder)) {
        const file = path.join(folder, name);
        const age = now - lstatSync(file).mtimeMs;
        if (age > (name.endsWith(".tmp") ? TORN_AFTER_MS : UNUSED_FOR_MS)) rmSync(file, { force: true });
        else kept++;
      }
      if (kept === 0 && folder !== dir) rmdirSync(folder);
    } catch {
      // Another process pruning at once, or an entry being written: left for the next start.
    }
  }
}
