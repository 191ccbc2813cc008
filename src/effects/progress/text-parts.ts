/**
 * The text side of a progress: what the server stores of a content, where a text too long for one
 * message is cut, a note below a text, and a short fingerprint of what a message shows (kept in
 * effect records instead of the text itself).
 */
import { createHash } from "node:crypto";

/** What the server keeps of `content`: trailing whitespace and leading newlines are dropped. */
export function stored(content: string): string {
  return content.replace(/\s+$/u, "").replace(/^\n+/, "");
}

/**
 * What the server drops of `part` (see {@link stored}): the line breaks at its start and the
 * whitespace at its end, so that the part can be told back from what its message shows.
 */
export function edgesOf(part: string): { lead: number; trail: string } {
  const body = part.replace(/\s+$/u, "");
  return { lead: body.length - body.replace(/^\n+/, "").length, trail: part.slice(body.length) };
}

/** `text` with `note` below it (in its place while it is empty). */
export const withNote = (text: string, note: string) => (text.trim() === "" ? note : `${text}\n\n${note}`);

/** A fingerprint of a message's content. */
export function fingerprint(content: string): string {
  return createHash("sha256").update(content).digest("base64url").slice(0, 16);
}

/**
 * Where to cut `text` (longer than `max`) so that the first part fits in one message: after the
 * last blank line within `max` characters, else the last line break, else the last space, else
 * at `max` (never inside a surrogate pair). Counting UTF-16 units keeps the part within `max`
 * code points too. Returns an index in (0, max].
 */
export function cutAt(text: string, max: number): number {
  const window = text.slice(0, max + 1);
  const floor = Math.floor(max / 2);
  for (const mark of ["\n\n", "\n", " "]) {
    const at = window.lastIndexOf(mark, max - mark.length);
    if (at >= floor) return at + mark.length;
  }
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}
