import type { RedisStatus } from "./redis-url.ts";

/** A value the store can hold: exactly what survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface SetOptions {
  /** Expire the key this many milliseconds from now. Without it the key never expires. */
  ttlMs?: number;
}

export interface UpdateOptions {
  /** Expire the key this many milliseconds from now. Without it the key keeps its current expiry. */
  ttlMs?: number;
}

/** One key and its value, as returned by {@link StateStore.list}. */
export interface StateEntry {
  key: string;
  value: JsonValue;
}

/**
 * One write of a batch. Values are JSON text (checked when the write was made); an `update`'s
 * `fn` runs against the value the key holds when the batch is applied.
 */
export type StoreWrite =
  | { op: "set"; key: string; text: string; ttlMs?: number }
  | { op: "setIfAbsent"; key: string; text: string; ttlMs?: number }
  | {
      op: "update";
      key: string;
      fn: (current: JsonValue | undefined) => JsonValue | undefined;
      ttlMs?: number;
      /**
       * The text the writer expects the key to hold (null: absent), as it last wrote it. A
       * networked store then checks this in its write instead of reading the key first, and
       * reads it only when it differs; `fn` still decides, so the meaning is the same.
       */
      expect?: string | null;
    }
  | { op: "delete"; key: string };

/** A batch applies at most once per marker: a key written with the batch, kept `ttlMs`. */
export interface OnceMarker {
  /** A view of the same store as the batch's (the marker is written in the same atomic step). */
  store: unknown;
  key: string;
  ttlMs: number;
}

/**
 * Namespaced, JSON-valued key-value storage.
 *
 * Values are copied in and out (mutating a returned object never changes the store). Keys are any
 * non-empty string up to 1024 characters. A view made with {@link StateStore.namespace} sees only
 * its own keys: it cannot read, list or overwrite its parent's keys or another namespace's.
 */
export interface StateStore {
  /** The value, or `undefined` when the key is absent or expired. */
  get(key: string): Promise<JsonValue | undefined>;
  /** The values of `keys`, in their order (`undefined` where absent): one read. */
  getMany(keys: readonly string[]): Promise<(JsonValue | undefined)[]>;
  /** Create or replace; replaces any previous expiry with `options.ttlMs` (or none). */
  set(key: string, value: JsonValue, options?: SetOptions): Promise<void>;
  /**
   * Create the key only if it is absent (or expired). Resolves `true` for exactly one of any number
   * of concurrent callers: the building block for exactly-once claims.
   */
  setIfAbsent(key: string, value: JsonValue, options?: SetOptions): Promise<boolean>;
  /**
   * Atomically replace the value with `fn(current)`; returning `undefined` deletes the key.
   * Resolves the new value. `fn` must be synchronous and pure: a networked backend runs it in a
   * compare-and-set loop and may call it more than once.
   */
  update(
    key: string,
    fn: (current: JsonValue | undefined) => JsonValue | undefined,
    options?: UpdateOptions,
  ): Promise<JsonValue | undefined>;
  /** Resolves `true` if the key existed (and was not expired). */
  delete(key: string): Promise<boolean>;
  /** This view's own keys starting with `prefix` (child namespaces excluded), sorted by key. */
  list(prefix?: string): Promise<StateEntry[]>;
  /**
   * Apply `writes` in order as one atomic step (no other write to their keys can come between),
   * fenced like every write. With `once`, only if its marker key is absent, writing it in the same
   * step: resolves false, applying nothing, when the marker was there (the batch was applied
   * before). A handler run's staged `ctx.state` writes are applied this way.
   */
  applyWrites(writes: readonly StoreWrite[], once?: OnceMarker): Promise<boolean>;
  /**
   * Delete every key of this view and of every namespace under it (their expiry aside); resolves
   * how many were deleted. The daemon uses it to start a bot afresh.
   */
  clear(): Promise<number>;
  /** A view whose keys live under `name` inside this view. Any non-empty name is safe. */
  namespace(name: string): StateStore;
  /**
   * Optional: throws `STATE_FENCED`, as a write would now, when this view is fenced by a lease
   * this instance does not hold at this moment (lost, or its validity ran out). A write's fence is
   * checked with the write; an effect made outside the store (a send) asks this right before.
   */
  checkFence?(): void;
}

/**
 * A whole store as the daemon owns it: the root view plus durability controls.
 * Only the daemon holds this; bots get a {@link StateStore} namespace.
 */
export interface StateBackend extends StateStore {
  /** Make every write issued before this call durable, against a machine crash too. */
  flush(): Promise<void>;
  /**
   * Make every write issued before this call survive a kill -9 of this process, not necessarily a
   * machine crash (FileStore: written to the OS, no fsync). Much cheaper than flush().
   */
  commit(): Promise<void>;
  /**
   * Optional: {@link commit} done synchronously. True when everything buffered was handed to the
   * OS; false, writing nothing, when that cannot happen now. Throws what `commit()` rejects with.
   */
  commitNow?(): boolean;
  /**
   * With `commitNow`: true when a `commitNow()` made later in this turn of the event loop (before
   * any I/O is processed) is sure to return true.
   */
  canCommitNow?(): boolean;
  /** Flush, release the store (and its lock), and refuse further use with `STATE_CLOSED`. */
  close(): Promise<void>;
  /** Redis only: the primary reached and how (status pages). */
  redisStatus?(): RedisStatus;
}
