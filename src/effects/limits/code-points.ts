/**
 * Lengths as the server measures them: Python's `len()` counts Unicode code points, so an emoji
 * outside the Basic Multilingual Plane counts 1, not the 2 UTF-16 units of JavaScript's `length`.
 */

/**
 * The number of Unicode code points in `text` (a lone surrogate counts as one): its UTF-16
 * length less one for each surrogate pair. Every send measures its content and topic, so this
 * reads char codes rather than stepping the string's iterator.
 */
export function codePointLength(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      count--;
      i++;
    }
  }
  return count;
}

/**
 * `text` cut to at most `max` code points, ending in `ellipsis` when cut; never splits a
 * surrogate pair. Returns whether it was cut.
 */
export function truncateCodePoints(
  text: string,
  max: number,
  ellipsis = "…",
): { text: string; truncated: boolean } {
  const points = Array.from(text);
  if (points.length <= max) return { text, truncated: false };
  const room = Math.max(0, max - codePointLength(ellipsis));
  return { text: points.slice(0, room).join("") + ellipsis, truncated: true };
}
