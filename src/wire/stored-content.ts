/**
 * Message content as the server stores it: trailing whitespace stripped as its Python strips it
 * (`str.rstrip()`), then leading newlines, then cut to `max_message_length`. Shared by the
 * sandbox, which stores it so, and by the read-backs, which match a send against the copy the
 * server stored.
 */

/**
 * Whitespace as `str.rstrip()` sees it: JavaScript's `\s` with the information separators
 * U+001C–U+001F and U+0085, without U+FEFF.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the separators are whitespace to Python.
const SPACE = /^(?:[^\S\uFEFF]|[\u001C-\u001F\u0085])$/;

/**
 * `raw` less its trailing whitespace, as the server strips it. Scanned from the end, one code unit
 * at a time (every such character is one unit): a pattern anchored at the end would try each
 * run of spaces inside the text again from each of its positions, quadratic in the run's length.
 */
export function rstripped(raw: string): string {
  let end = raw.length;
  while (end > 0 && SPACE.test(raw[end - 1]!)) end--;
  return end === raw.length ? raw : raw.slice(0, end);
}

/** `raw` as the server stores a message's content, before cutting it to `max_message_length`. */
export function strippedContent(raw: string): string {
  return rstripped(raw).replace(/^\n+/, "");
}

/** What ends content the server cut to its `max_message_length`. */
export const CUT_CONTENT_ENDING = "\n[message truncated]";

/** Cut to `max` code points, ending with `suffix`, as the server's truncate_content. */
export function truncate(text: string, max: number, suffix: string): string {
  const points = [...text];
  if (points.length <= max) return text;
  return points.slice(0, max - [...suffix].length).join("") + suffix;
}
