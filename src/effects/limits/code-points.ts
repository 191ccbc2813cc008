/**
 * Lengths as the server measures them: Python's `len()` counts Unicode code points, so an emoji
 * outside the Basic Multilingual Plane counts 1, not the 2 UTF-16 units of JavaScript's `length`.
 */

/** The number of Unicode code points in `text` (a lone surrogate counts as one). */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
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
