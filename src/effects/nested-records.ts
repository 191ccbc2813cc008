/**
 * What a dead letter carries of a run's effect records ({@link letterRecords}): the run's own and
 * those of the runs nested in it (`ctx.external`'s results, a progress's edits: see
 * `EffectRun.nested`). The nested runs' records go in one entry numbered 0, which no effect has (a
 * version that knows no nested records reads past it), holding each nested run's records under
 * its name. A replay after the store's records expired (days later, by an operator) finds them
 * there and makes none of them again: no external call made twice. A dialog's log keeps them as
 * well (pipeline/dialogs/nested-effects.ts): its replay weeks later finds them there.
 */
import type { JsonValue } from "../state/state-store.ts";

/** A record as this file sees it (an `EffectRecord`). */
export interface NumberedRecord {
  n: number;
  kind: string;
  result: JsonValue;
}

/** The kind of the entry numbered 0. */
const NESTED = "nested";

/** The entry numbered 0 that carries `byName` (each nested run's records, by its name). */
export function nestedCarried(byName: Record<string, JsonValue>): NumberedRecord {
  return { n: 0, kind: NESTED, result: byName };
}

/** What `entry` (a carried entry numbered 0, if any) holds for the nested run `name`. */
export function carriedFor<R extends NumberedRecord>(entry: R | undefined, name: string): R[] {
  if (entry?.kind !== NESTED || typeof entry.result !== "object" || entry.result === null) return [];
  const records = (entry.result as Record<string, JsonValue>)[name];
  return Array.isArray(records) ? (records as unknown as R[]) : [];
}

/**
 * The entry numbered 0 a letter carries for `runs` (each nested run's name, and what it keeps for
 * a letter: with what it was carried and did not make again, but for an effect refused), and what
 * `carried` (the entry this run was given) held for a nested run it did not reach; undefined when
 * there is nothing to carry.
 */
export function nestedEntry<R extends NumberedRecord>(
  carried: R | undefined,
  runs: ReadonlyMap<string, { readonly kept: readonly R[] }> | undefined,
): NumberedRecord | undefined {
  const names = new Set(runs?.keys());
  if (carried?.kind === NESTED && carried.result !== null && typeof carried.result === "object")
    for (const name of Object.keys(carried.result)) names.add(name);
  const result: Record<string, JsonValue> = {};
  for (const name of names) {
    const kept = [...(runs?.get(name)?.kept ?? carriedFor(carried, name))];
    if (kept.length > 0) result[name] = kept.sort((a, b) => a.n - b.n) as unknown as JsonValue;
  }
  return Object.keys(result).length > 0 ? { n: 0, kind: NESTED, result } : undefined;
}

/**
 * What a dead letter carries for a run: the records it `made`, those it was `carried` and did
 * not reach (a replay that failed before them: those effects stay made), and its nested `runs`'
 * entry.
 */
export function letterRecords<R extends NumberedRecord>(
  made: readonly R[],
  carried: ReadonlyMap<number, R> | undefined,
  runs: ReadonlyMap<string, { readonly kept: readonly R[] }> | undefined,
): readonly NumberedRecord[] {
  const entry = nestedEntry(carried?.get(0), runs);
  if (carried === undefined && entry === undefined) return made;
  const reached = new Set(made.map((r) => r.n));
  const kept: NumberedRecord[] = [...made];
  for (const [n, r] of carried ?? []) if (n > 0 && !reached.has(n)) kept.push(r);
  kept.sort((a, b) => a.n - b.n);
  if (entry !== undefined) kept.push(entry);
  return kept;
}
