/**
 * The effects of the runs nested in a dialog's runs (a progress's steps after its first post: see
 * `EffectRun.nested`), kept in the dialog's log (`nfx` entries) beside its own effects (`fx`). A
 * replay reads them there, not in the bot's effect records, which live hours (at least 6: see
 * wire-bot.ts) where a dialog waits up to 30 days: a progress finished before a question is not
 * finished again (its result posted twice) when the answer comes days later. `ctx.external`'s
 * results are not among them: the log keeps those as values.
 */
import type { EffectRecord } from "../../effects/effect-records.ts";
import { nestedCarried } from "../../effects/nested-records.ts";
import type { JsonValue } from "../../state/state-store.ts";
import { EXTERNALS } from "../external.ts";

/** Each nested run's records, by the run's name, in the order of their numbers. */
export type NestedEffects = Record<string, JsonValue[]>;

const numberOf = (record: JsonValue) => (record as unknown as EffectRecord).n;

/** `added` over `into`: a record replaces the one of its number. A new object, `into` unchanged. */
export function mergeNested(into: NestedEffects | undefined, added: JsonValue): NestedEffects {
  const merged: NestedEffects = { ...into };
  for (const [name, records] of Object.entries(added as NestedEffects)) {
    const byNumber = new Map((merged[name] ?? []).map((r) => [numberOf(r), r]));
    for (const r of records) byNumber.set(numberOf(r), r);
    merged[name] = [...byNumber.values()].sort((a, b) => numberOf(a) - numberOf(b));
  }
  return merged;
}

/**
 * What the nested runs `made` (or found made) that the log's `kept` does not hold as it is, for
 * the log's next `nfx` entry; undefined when there is nothing new.
 */
export function nestedAdded(
  made: ReadonlyMap<string, readonly EffectRecord[]>,
  kept: NestedEffects | undefined,
): NestedEffects | undefined {
  const added: NestedEffects = {};
  for (const [name, records] of made) {
    if (name === EXTERNALS) continue;
    const known = new Map((kept?.[name] ?? []).map((r) => [numberOf(r), JSON.stringify(r)]));
    const fresh = records.filter((r) => known.get(r.n) !== JSON.stringify(r));
    if (fresh.length > 0) added[name] = fresh as unknown as JsonValue[];
  }
  return Object.keys(added).length > 0 ? added : undefined;
}

/** Where a rewind cuts `nested`: each run's highest number so far (a question's mark, before its send). */
export function nestedMark(nested: NestedEffects): Record<string, number> {
  const mark: Record<string, number> = {};
  for (const [name, records] of Object.entries(nested)) mark[name] = Math.max(0, ...records.map(numberOf));
  return mark;
}

/** `nested` as it was at `mark` (a rewind): the records made after it are dropped. */
export function rewoundNested(
  nested: NestedEffects | undefined,
  mark: Record<string, number> | undefined,
): NestedEffects | undefined {
  const kept: NestedEffects = {};
  for (const [name, records] of Object.entries(nested ?? {})) {
    const upTo = mark?.[name] ?? 0;
    const before = records.filter((r) => numberOf(r) <= upTo);
    if (before.length > 0) kept[name] = before;
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** The effect records a replay of a dialog is carried: its own (`effects`), and its nested runs'. */
export function replayedEffects(dialog: {
  effects: JsonValue[];
  nested?: NestedEffects | undefined;
}): readonly JsonValue[] {
  if (dialog.nested === undefined) return dialog.effects;
  return [...dialog.effects, nestedCarried(dialog.nested) as unknown as JsonValue];
}
