/**
 * Just enough of Zulip's fenced-block rules to split messages without breaking code blocks:
 * a fence is three or more backticks or tildes (up to three spaces of indentation); a block
 * closes on a line of the same character, at least as long, with nothing else. `quote` and
 * `spoiler` blocks hold Markdown, so fences may nest inside them; code blocks hold plain text.
 */

/** An open fenced block. */
export interface OpenFence {
  /** The fence characters, e.g. "```" or "~~~~". */
  marker: string;
  /** The whole opening line, used to reopen the block in the next chunk. */
  opener: string;
  /** Index of the newline that ends the opening line (in the text being scanned). */
  end: number;
  markdown: boolean;
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})([\s\S]*)$/;

/** The stack of open blocks after `line` (which ends at index `end`), given the stack before it. */
export function stepFences(stack: readonly OpenFence[], line: string, end: number): readonly OpenFence[] {
  const match = FENCE_LINE.exec(line);
  if (!match) return stack;
  const marker = match[1] ?? "";
  const info = match[2] ?? "";
  const top = stack.at(-1);
  if (top && marker[0] === top.marker[0] && marker.length >= top.marker.length && info.trim() === "") {
    return stack.slice(0, -1);
  }
  if (top && !top.markdown) return stack; // inside code, a fence-like line is just code
  if (marker[0] === "`" && info.includes("`")) return stack; // inline code, not a fence
  const lang = (info.trim().split(/\s+/)[0] ?? "").replace(/^\{?\.?/, "").toLowerCase();
  return [...stack, { marker, opener: line, end, markdown: lang === "quote" || lang === "spoiler" }];
}

/** The text that closes every open block, innermost first, each on its own line. */
export function closingText(stack: readonly OpenFence[]): string {
  return stack
    .map((fence) => `\n${fence.marker}`)
    .reverse()
    .join("");
}

/** The text that reopens every open block, outermost first, ending in a newline. */
export function reopeningText(stack: readonly OpenFence[]): string {
  return stack.map((fence) => `${fence.opener}\n`).join("");
}
