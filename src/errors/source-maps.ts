/**
 * Places in a TypeScript module's own source for places in the JavaScript made of it. The
 * transform moves code (an `import` written after code is hoisted to the top, which crams the code
 * between onto the import's line), and removes types, so a stack frame's line and column are the
 * made code's. Each module's source map is kept here, encoded, and read only when an error's place
 * is wanted: no process-wide source maps (Node's would map every stack trace, and cost each one).
 */
import { SourceMap, type SourceMapPayload } from "node:module";

/** How babel appends an inline map to the code it makes. */
const INLINE = "\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,";

interface Kept {
  /** The map, base64 JSON, as the transform made it. */
  encoded: string;
  /** Characters the loader puts before the made code's first line (its function wrapper). */
  firstLineShift: number;
  map?: SourceMap;
}

const kept = new Map<string, Kept>();

/** `code`'s inline source map without the sources' text (a map is kept only for its mappings). */
export function slimSourceMap(code: string): string {
  const at = code.lastIndexOf(INLINE);
  if (at < 0) return code;
  try {
    const map = JSON.parse(Buffer.from(code.slice(at + INLINE.length), "base64").toString("utf8")) as {
      sourcesContent?: unknown;
    };
    delete map.sourcesContent;
    return `${code.slice(0, at)}${INLINE}${Buffer.from(JSON.stringify(map)).toString("base64")}`;
  } catch {
    return code;
  }
}

/**
 * `code` without its inline source map, which is kept as `file`'s (replacing an earlier one: a
 * reload's). `firstLineShift`: what the loader puts before the code's first line when it runs it.
 */
export function keepSourceMap(file: string, code: string, firstLineShift: number): string {
  const at = code.lastIndexOf(INLINE);
  if (at < 0) {
    kept.delete(file);
    return code;
  }
  kept.set(file, { encoded: code.slice(at + INLINE.length).trim(), firstLineShift });
  return code.slice(0, at);
}

/**
 * Where `line`:`column` (counted from 1, as a stack frame says them) of the code made of `file`
 * is in `file`'s source; undefined when no map of `file` is kept or it names no place there.
 */
export function originalPlace(
  file: string,
  line: number,
  column: number,
): { line: number; column: number } | undefined {
  const found = kept.get(file);
  if (found === undefined) return undefined;
  try {
    found.map ??= new SourceMap(
      JSON.parse(Buffer.from(found.encoded, "base64").toString("utf8")) as SourceMapPayload,
    );
    const shift = line === 1 ? found.firstLineShift : 0;
    const entry = found.map.findEntry(line - 1, Math.max(0, column - 1 - shift)) as {
      originalLine?: number;
      originalColumn?: number;
    };
    if (entry.originalLine === undefined || entry.originalColumn === undefined) return undefined;
    return { line: entry.originalLine + 1, column: entry.originalColumn + 1 };
  } catch {
    return undefined;
  }
}
