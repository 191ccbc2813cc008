/**
 * A handler run's `ctx.state`: its writes are staged in memory, seen by the run's own reads, and
 * applied to the store only when the run succeeds, as one atomic batch (`applyWrites`) that also
 * writes the event's marker. A failed run (or a kill -9 before the batch) leaves nothing; the
 * run that succeeds applies its writes once, and a re-run after that (a crash before the message
 * was recorded as handled, a dead letter replayed twice) finds the marker and applies nothing.
 *
 * `update` stages its function: the run sees `fn(the value it reads now)`, and the batch calls
 * `fn` again on the value the key holds when it applies, so two conversations updating one key
 * both count.
 */
import { checkKey, checkTtl, fromJsonText, toJsonText } from "./_keys.ts";
import type {
  JsonValue,
  OnceMarker,
  SetOptions,
  StateEntry,
  StateStore,
  StoreWrite,
  UpdateOptions,
} from "./state-store.ts";

/** What a {@link KV} reads and writes through: a store, or a run's staged view of one. */
export type KVStore = Pick<StateStore, "get" | "set" | "setIfAbsent" | "update" | "delete" | "list">;

/** Where a run's marker comes from: made when its writes apply (most runs write nothing). */
export interface MarkerSource {
  marker(): OnceMarker | undefined;
}

/** A key's value as the run sees it: text, or undefined once the run deleted it. */
type Staged = { text: string | undefined };

export class StagedState implements KVStore {
  readonly #store: StateStore;
  readonly #once: MarkerSource | undefined;
  /** Allocated at the first write: most runs write nothing. */
  #writes: StoreWrite[] | undefined;
  #view: Map<string, Staged> | undefined;

  /** `once`: the event's marker; without one the batch applies each time a run succeeds. */
  constructor(store: StateStore, once: MarkerSource | undefined) {
    this.#store = store;
    this.#once = once;
  }

  /** Not `async`: a run that staged nothing (most) reads the store's promise as it is. */
  get(key: string): Promise<JsonValue | undefined> {
    const view = this.#view;
    return view === undefined ? this.#store.get(key) : this.#viewed(view, key);
  }

  async #viewed(view: Map<string, Staged>, key: string): Promise<JsonValue | undefined> {
    const staged = view.get(checkKey(key));
    if (staged === undefined) return this.#store.get(key);
    return staged.text === undefined ? undefined : fromJsonText(staged.text);
  }

  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    const text = toJsonText(checkKey(key), value);
    this.#stage({ op: "set", key, text, ...ttl(options) }, text);
  }

  async setIfAbsent(key: string, value: JsonValue, options?: SetOptions): Promise<boolean> {
    const text = toJsonText(checkKey(key), value);
    const ttlMs = ttl(options);
    if ((await this.get(key)) !== undefined) return false;
    this.#stage({ op: "setIfAbsent", key, text, ...ttlMs }, text);
    return true;
  }

  async update(
    key: string,
    fn: (current: JsonValue | undefined) => JsonValue | undefined,
    options?: UpdateOptions,
  ): Promise<JsonValue | undefined> {
    const ttlMs = ttl(options);
    const next = fn(await this.get(checkKey(key)));
    const text = next === undefined ? undefined : toJsonText(key, next);
    this.#stage({ op: "update", key, fn, ...ttlMs }, text);
    return text === undefined ? undefined : fromJsonText(text);
  }

  async delete(key: string): Promise<boolean> {
    const existed = (await this.get(checkKey(key))) !== undefined;
    this.#stage({ op: "delete", key }, undefined);
    return existed;
  }

  async list(prefix = ""): Promise<StateEntry[]> {
    const entries = await this.#store.list(prefix);
    const view = this.#view;
    if (view === undefined) return entries;
    const merged = new Map(entries.map((e) => [e.key, e.value]));
    for (const [key, { text }] of view) {
      if (!key.startsWith(prefix)) continue;
      if (text === undefined) merged.delete(key);
      else merged.set(key, fromJsonText(text));
    }
    return [...merged].map(([key, value]) => ({ key, value })).sort((a, b) => (a.key < b.key ? -1 : 1));
  }

  /**
   * Apply the staged writes (the run succeeded): undefined when there are none, else a promise
   * that resolves once they are in the store (or were found applied by an earlier run). Called
   * once per run (a second call finds nothing); writes staged afterwards (by a handler that did
   * not await them) are not applied.
   */
  commit(): Promise<boolean> | undefined {
    const writes = this.#writes;
    if (writes === undefined) return undefined;
    this.#writes = undefined;
    return this.#store.applyWrites(writes, this.#once?.marker());
  }

  #stage(write: StoreWrite, text: string | undefined): void {
    this.#writes ??= [];
    this.#view ??= new Map();
    this.#writes.push(write);
    this.#view.set(write.key, { text });
  }
}

function ttl(options: SetOptions | undefined): { ttlMs?: number } {
  const ttlMs = checkTtl(options);
  return ttlMs === undefined ? {} : { ttlMs };
}
