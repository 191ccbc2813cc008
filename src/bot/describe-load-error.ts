/**
 * One line saying why a bot module failed to load, and where: never a stack trace.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Jiti } from "jiti";

/**
 * Describes an error thrown while importing `file` (written `specifier` in the config).
 *
 * @example
 * ```ts
 * await describeLoadError(err, "/srv/bots/echo.mjs", "./bots/echo.mjs", jiti);
 * // "has a syntax error at ./bots/echo.mjs:3:14: Unexpected token ';'; fix it and start again"
 * ```
 */
export async function describeLoadError(
  err: unknown,
  file: string,
  specifier: string,
  jiti: Jiti,
): Promise<string> {
  const message = err instanceof Error ? err.message : String(err);
  const firstLine = (message.split("\n")[0] ?? "").trim();
  // jiti (TypeScript modules): "ParseError: Unexpected token \n /abs/file.ts:3:14"
  const parse = /^ParseError:\s*(.*?)\s*\n\s*(.+):(\d+):(\d+)\s*$/s.exec(message);
  if (parse) return syntax(specifier, `${parse[3]}:${parse[4]}`, parse[1] || "Unexpected token");
  if (!/\.[mc]?ts$/.test(file)) {
    // Node's SyntaxError for an ES module has no position in its message (and other loaders, such
    // as test runners, word it differently); jiti's parser finds the position.
    const found = await locateSyntaxError(file, jiti);
    if (found) return syntax(specifier, found.at, err instanceof SyntaxError ? firstLine : found.message);
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") {
    const what = firstLine.replace(/ imported from .*$/, "");
    return `could not be loaded: ${what}: install what it imports (npm install in ${path.dirname(file)}), or fix the import`;
  }
  // E.g. "The requested module './x.js' does not provide an export named 'y'".
  if (err instanceof SyntaxError) return `could not be loaded: ${firstLine}`;
  return `threw while loading: ${firstLine || (err instanceof Error ? err.name : "an exception")}`;
}

function syntax(specifier: string, at: string, what: string): string {
  return `has a syntax error at ${specifier}:${at}: ${what}; fix it and start again`;
}

async function locateSyntaxError(
  file: string,
  jiti: Jiti,
): Promise<{ at: string; message: string } | undefined> {
  try {
    const code = jiti.transform({ source: await readFile(file, "utf8"), filename: file, ts: false });
    const found = /__JITI_ERROR__\s*=\s*(\{.*\})/.exec(code);
    if (!found) return undefined;
    const { line, column, message } = JSON.parse(found[1]!) as {
      line?: number;
      column?: number;
      message?: string;
    };
    if (line === undefined) return undefined;
    return { at: `${line}:${column ?? 0}`, message: message?.trim() || "Unexpected token" };
  } catch {
    return undefined;
  }
}
