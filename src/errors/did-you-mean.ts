/**
 * "Did you mean" suggestions for misspelled keys and names.
 */

/** Edit distance between two short strings (insertions, deletions, substitutions, transpositions). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `input`, if it is close enough to be a likely typo.
 */
export function suggest(input: string, candidates: Iterable<string>): string | undefined {
  const lower = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    // A typo is at most 3 edits: a length further off than that is no match (and a megabyte input
    // costs no distance table).
    if (Math.abs(candidate.length - input.length) > 3) continue;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Long names tolerate more typos; very short ones only one, so "id" does not suggest "at".
  const limit = Math.max(1, Math.min(3, Math.floor(input.length / 3)));
  return bestDistance <= limit ? best : undefined;
}

/**
 * True when `mapping` has a key that is a likely typo of `wanted` (and not `wanted` itself), so
 * "`wanted` is missing" would only repeat the "did you mean" problem of that key.
 */
export function hasTypoOf(mapping: object, wanted: string): boolean {
  return Object.keys(mapping).some((key) => key !== wanted && suggest(key, [wanted]) === wanted);
}

/** `names` listed for a message: the first `most`, then how many more. */
export function someOf(names: readonly string[], most = 8): string {
  return names.length > most
    ? `${names.slice(0, most).join(", ")} and ${names.length - most} more`
    : names.join(", ");
}

/** `no bot named "x" in <where> (bots: …). Did you mean "y"?`: a bot name nothing in `names` is. */
export function noBotNamed(name: string, names: readonly string[], where: string): string {
  const hint = suggest(name, names);
  return `no bot named "${name}" in ${where} (bots: ${someOf(names)})${hint ? `. Did you mean "${hint}"?` : ""}`;
}
