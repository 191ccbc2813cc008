/**
 * A bot module's fingerprint: a hash of its file and of the local files it imports, followed
 * through relative specifiers (`./rules.ts`, `../shared/x.js`). A reload restarts a bot whose
 * fingerprint changed; packages under node_modules are not followed (a dependency upgrade needs a
 * restart of the daemon).
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";

/** Static imports, re-exports, dynamic import() and require() of a relative path. */
const LOCAL_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
const CANDIDATES = ["", ".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", "/index.ts", "/index.js"];
/** A bound on the files followed, so a cycle or a huge tree cannot stall a reload. */
const MAX_FILES = 500;

/**
 * @example
 * ```ts
 * const before = await moduleFingerprint("/srv/bots/moderation.ts");
 * // … the file or one it imports is edited …
 * (await moduleFingerprint("/srv/bots/moderation.ts")) !== before; // true
 * ```
 */
export async function moduleFingerprint(file: string): Promise<string> {
  const hash = createHash("sha256");
  const seen = new Set<string>();
  const pending = [file];
  while (pending.length > 0 && seen.size < MAX_FILES) {
    const next = pending.shift()!;
    if (seen.has(next)) continue;
    seen.add(next);
    const text = await readFile(next, "utf8").catch(() => undefined);
    hash.update(`${next}\u0000${text ?? "(unreadable)"}\u0000`);
    if (text === undefined) continue;
    for (const match of text.matchAll(LOCAL_IMPORT)) {
      const found = await firstExisting(path.resolve(path.dirname(next), match[1]!));
      if (found !== undefined && !seen.has(found)) pending.push(found);
    }
  }
  return hash.digest("hex");
}

async function firstExisting(base: string): Promise<string | undefined> {
  // A .js specifier may name a .ts source (TypeScript's rewriting convention).
  const stems = /\.[mc]?js$/.test(base) ? [base, base.replace(/js$/, "ts")] : [base];
  for (const stem of stems) {
    for (const suffix of CANDIDATES) {
      const candidate = stem + suffix;
      if (await isFile(candidate)) return candidate;
    }
  }
  return undefined;
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
