/**
 * Message content as the server stores it: trailing whitespace stripped as its Python strips it
 * (`str.rstrip()`), then leading newlines. Shared by the sandbox, which stores it so, and by the
 * read-backs, which match a send against the copy the server stored.
 */

/**
 * Trailing whitespace as `str.rstrip()` sees it: JavaScript's `\s` with the information
 * separators U+001C–U+001F and U+0085, without U+FEFF.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the separators are whitespace to Python.
const TRAILING_SPACE = /(?:[^\S\uFEFF]|[\u001C-\u001F\u0085])+$/u;

/** `raw` less its trailing whitespace, as the server strips it. */
export function rstripped(raw: string): string {
  return raw.replace(TRAILING_SPACE, "");
}

/** `raw` as the server stores a message's content (before truncating it to `max_message_length`). */
export function strippedContent(raw: string): string {
  return rstripped(raw).replace(/^\n+/, "");
}
