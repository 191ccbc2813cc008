/** Reading source files as code: their text without comments, for the architecture tests. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** The code of `text` without its comments (line numbers kept), so examples in TSDoc do not count. */
export function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, " "))
    .replace(/(?<![:"'`\w])\/\/[^\n]*/g, "");
}

/** Every file under `root` whose path (relative, with "/") `keep` accepts, with its text. */
export function filesUnder(root: string, keep: (file: string) => boolean): { file: string; text: string }[] {
  return readdirSync(root, { recursive: true })
    .map((f) => String(f).split(path.sep).join("/"))
    .filter(keep)
    .map((file) => ({ file, text: readFileSync(path.join(root, file), "utf8") }));
}
