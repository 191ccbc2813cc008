/**
 * Where an error from the user's own code (a bot module's top level, its `setup`) was thrown, to
 * name the place in a one-line message instead of showing a stack trace.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { originalPlace } from "./source-maps.ts";

/** bothost's own code (built or not): frames there are not the user's. */
const OWN = ["dist", "src"].map((dir) => fileURLToPath(new URL(`../../${dir}/`, import.meta.url)));

/** A frame's place: `at fn (PLACE)` or `at [async] PLACE`, PLACE being `file:line:column`. */
const PLACE = /^\s*at (?:async )?(?:[^(]*\((.+)\)|(.+))\s*$/;

/** `file:line:column`, the file a path or a file: URL (not `node:internal/…`, `<anonymous>`). */
const FILE_LINE = /^((?:file:\/\/|\/|[A-Za-z]:[\\/]).*):(\d+):(\d+)$/;

/**
 * The first frame of `err`'s stack in a file of the user's (not in `node_modules`, not bothost's
 * own, not Node's), as `bots/greeter.ts:12:7` (relative to `cwd` when inside it, or as `cwd` names
 * it when it is a function of the absolute file); undefined when there is none.
 */
export function whereThrown(
  err: unknown,
  cwd: string | ((file: string) => string) = process.cwd(),
): string | undefined {
  const stack = err instanceof Error && typeof err.stack === "string" ? err.stack : "";
  for (const frame of stack.split("\n").slice(1)) {
    const place = PLACE.exec(frame);
    const found = place && FILE_LINE.exec((place[1] ?? place[2] ?? "").trim());
    if (!found) continue;
    const [, where, madeLine, madeColumn] = found as unknown as [string, string, string, string];
    let file: string;
    try {
      // A module imported again (a reload) carries a query: `bot.mjs?reload=2`.
      file = where.startsWith("file://") ? fileURLToPath(where) : where.replace(/[?#].*$/, "");
    } catch {
      continue;
    }
    if (file.split(/[\\/]/).includes("node_modules") || OWN.some((own) => file.startsWith(own))) continue;
    // A TypeScript module's frame is in the code made of it: said in its own source.
    const original = originalPlace(file, Number(madeLine), Number(madeColumn));
    const [line, column] = original ? [original.line, original.column] : [madeLine, madeColumn];
    if (typeof cwd === "function") return `${cwd(file)}:${line}:${column}`;
    const relative = path.relative(cwd, file);
    const shown =
      relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file;
    return `${shown}:${line}:${column}`;
  }
  return undefined;
}
