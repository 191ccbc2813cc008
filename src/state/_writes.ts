/**
 * Writes applied together (`StateStore.applyWrites`): how a list of writes, in order, folds into
 * one final write per key against the values the keys hold when they are applied. Shared by the
 * embedded and the Redis store, so both give a batch the same meaning.
 */
import { fromJsonText, toJsonText } from "./_keys.ts";
import type { StoreWrite } from "./state-store.ts";

/**
 * A key's value after the batch: `text` undefined deletes it. `expiry`: keep the key's current
 * expiry, none, or this many milliseconds from the moment the batch applies.
 */
export interface FinalWrite {
  key: string;
  text: string | undefined;
  expiry: "keep" | "none" | number;
}

/**
 * Fold `writes` over `current` (the text each key holds now, undefined when absent): one final
 * write per key that changed, in the order the keys were first written.
 */
export function foldWrites(
  writes: readonly StoreWrite[],
  current: (key: string) => string | undefined,
): FinalWrite[] {
  const finals = new Map<string, FinalWrite & { changed: boolean }>();
  for (const w of writes) {
    let f = finals.get(w.key);
    if (f === undefined) {
      f = { key: w.key, text: current(w.key), expiry: "keep", changed: false };
      finals.set(w.key, f);
    }
    switch (w.op) {
      case "set":
        Object.assign(f, { text: w.text, expiry: w.ttlMs ?? "none", changed: true });
        break;
      case "setIfAbsent":
        if (f.text === undefined)
          Object.assign(f, { text: w.text, expiry: w.ttlMs ?? "none", changed: true });
        break;
      case "update": {
        const next = w.fn(f.text === undefined ? undefined : fromJsonText(f.text));
        // A key created by an update has no expiry to keep.
        const expiry = w.ttlMs ?? (f.text === undefined ? "none" : f.expiry);
        if (next === undefined) Object.assign(f, { text: undefined, expiry: "none", changed: true });
        else Object.assign(f, { text: toJsonText(w.key, next), expiry, changed: true });
        break;
      }
      case "delete":
        Object.assign(f, { text: undefined, expiry: "none", changed: true });
        break;
    }
  }
  const result: FinalWrite[] = [];
  for (const { key, text, expiry, changed } of finals.values())
    if (changed) result.push({ key, text, expiry });
  return result;
}

/** The keys a batch touches, each once. */
export function keysOf(writes: readonly StoreWrite[]): string[] {
  return [...new Set(writes.map((w) => w.key))];
}
