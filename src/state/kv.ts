import { type KVStore, type MarkerSource, StagedState } from "./staged-state.ts";
import type { JsonValue, OnceMarker, SetOptions, StateStore, UpdateOptions } from "./state-store.ts";

/** Where a bot's markers of applied runs are kept, and for how long. */
export interface AppliedMarkers {
  store: StateStore;
  ttlMs: number;
}

/** A handler run's `ctx.state` and how its staged writes are applied (see staged-state.ts). */
export interface StateRun {
  state: KV;
  /** Undefined when the run wrote nothing; else resolves once its writes are in the store. */
  commit(): Promise<boolean> | undefined;
}

/**
 * The typed key-value view a bot sees as `ctx.state`.
 *
 * The type parameters are the caller's promise, not something the store can check: data written by
 * an older version of the bot comes back as it was stored. Validate with zod when that matters.
 * Values must be plain JSON; anything else is refused with `STATE_INVALID_VALUE`.
 *
 * In a handler (an event's, a cron job's, an inbound webhook's) the writes are applied once per
 * event however often the handler runs for it: they are kept with the run and applied when it
 * succeeds, so a run that fails leaves nothing. The run's own reads see them. `update` applies
 * its function again, when the run succeeds, to the value the key holds then: keep it pure.
 * `ctx.state.immediate` writes at once, even if the run fails later. `bot.state` (outside
 * handlers) writes at once too.
 *
 * @example
 * ```ts
 * const count = (await ctx.state.get<number>("count")) ?? 0;
 * await ctx.state.set("count", count + 1);
 * await ctx.state.set("seen-recently", true, { ttlMs: 60_000 });
 * ```
 */
export class KV {
  readonly #store: KVStore;
  readonly #root: StateStore | undefined;
  /**
   * Where this state writes at once (`bot.state`, `ctx.state.immediate`): each write is committed
   * before it resolves, so a claim made before a side effect survives a kill -9 of the process
   * even when nothing else commits (a non-message event's run records no effect).
   */
  readonly #commit: (() => Promise<void>) | undefined;
  readonly #markers: AppliedMarkers | undefined;
  /** This state with writes that happen at once (in a handler, even if the run fails later). */
  readonly immediate: KV;

  /** `commit`: makes the store's writes survive a kill -9 of the process (the daemon's commit). */
  constructor(store: StateStore, markers?: AppliedMarkers, commit?: () => Promise<void>);
  constructor(store: KVStore, markers: undefined, immediate: KV);
  constructor(store: StateStore | KVStore, markers?: AppliedMarkers, third?: KV | (() => Promise<void>)) {
    const immediate = third instanceof KV ? third : undefined;
    this.#store = store;
    this.#root = immediate ? undefined : (store as StateStore);
    this.#commit = immediate ? undefined : (third as (() => Promise<void>) | undefined);
    this.#markers = markers;
    this.immediate = immediate ?? this;
  }

  /**
   * The state of one handler run for `event`, its writes staged until `commit`. `keyOf(event)`:
   * the event's key (the same for every run of it), under which the applied batch is marked.
   * Nothing is allocated but the run, nor the key made, until the handler touches `ctx.state`.
   */
  static run<E>(kv: KV, keyOf: (event: E) => string | undefined, event: E, keptMs?: number): StateRun {
    return new StagedRun(kv.immediate, keyOf, event, keptMs);
  }

  /**
   * Call `fn` with a run's state; once its result resolves, apply the run's writes, then resolve
   * with that result. What `fn` throws or rejects with leaves no write. `keptMs`: how long the
   * marker of `once` is kept, if not the bot's default (an inbound webhook's idempotency window).
   */
  static within<R>(kv: KV, once: string | undefined, fn: (state: KV) => R, keptMs?: number): R {
    const run = KV.run(kv, identity, once, keptMs);
    return Promise.resolve(fn(run.state)).then(async (value) => {
      await run.commit();
      return value;
    }) as R;
  }

  /** @internal A run's staged view of `kv`'s store (see {@link KV.run}): `once` names its marker when it applies. */
  static staged(kv: KV, once: MarkerSource): StagedState {
    return new StagedState(kv.#root!, once);
  }

  /** @internal The state a run sees through `staged`, writing at once through `kv` (`immediate`). */
  static over(kv: KV, staged: StagedState): KV {
    return new KV(staged, undefined, kv);
  }

  /** @internal The marker of event key `once`'s applied batch, kept `keptMs` (else the bot's default). */
  static markerOf(kv: KV, once: string | undefined, keptMs?: number): OnceMarker | undefined {
    const markers = kv.#markers;
    return once !== undefined && markers
      ? { store: markers.store, key: once, ttlMs: keptMs ?? markers.ttlMs }
      : undefined;
  }

  get<T = JsonValue>(key: string): Promise<T | undefined> {
    // The store's promise as it is, not another one around it: a handler's read costs one
    // promise and one turn of the microtask queue. What the store throws is a rejection still.
    try {
      return this.#store.get(key) as Promise<T | undefined>;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async set<T = JsonValue>(key: string, value: T, options?: SetOptions): Promise<void> {
    await this.#store.set(key, value as JsonValue, options);
    await this.#commit?.();
  }

  /**
   * Resolves `true` if this call created the key. Written at once (`bot.state`, `immediate`):
   * exactly one concurrent caller wins. In a handler: `true` when the run sees the key absent;
   * the key is created when the run succeeds, if still absent then. A claim other conversations
   * must see before the run ends belongs in `ctx.state.immediate.setIfAbsent`.
   */
  async setIfAbsent<T = JsonValue>(key: string, value: T, options?: SetOptions): Promise<boolean> {
    const created = await this.#store.setIfAbsent(key, value as JsonValue, options);
    await this.#commit?.();
    return created;
  }

  /**
   * Atomic read-modify-write; `fn` must be synchronous and pure (it may be called more than
   * once); returning `undefined` deletes. In a handler `fn` runs again when the run succeeds,
   * on the value current then, so concurrent updates from other conversations all count.
   */
  async update<T = JsonValue>(
    key: string,
    fn: (current: T | undefined) => T | undefined,
    options?: UpdateOptions,
  ): Promise<T | undefined> {
    const next = await this.#store.update(
      key,
      (current) => fn(current as T | undefined) as JsonValue | undefined,
      options,
    );
    await this.#commit?.();
    return next as T | undefined;
  }

  async delete(key: string): Promise<boolean> {
    const deleted = await this.#store.delete(key);
    await this.#commit?.();
    return deleted;
  }

  /** Keys starting with `prefix`, sorted by key. */
  async list<T = JsonValue>(prefix = ""): Promise<Array<{ key: string; value: T }>> {
    return (await this.#store.list(prefix)) as Array<{ key: string; value: T }>;
  }
}

const identity = <T>(value: T): T => value;

/**
 * A run's state, made on first use (most handlers never touch `ctx.state`); its marker, and the
 * event's key in it, when its writes apply (most runs only read).
 */
class StagedRun<E> implements StateRun, MarkerSource {
  readonly #kv: KV;
  readonly #keyOf: (event: E) => string | undefined;
  readonly #event: E;
  readonly #keptMs: number | undefined;
  #staged: StagedState | undefined;
  #state: KV | undefined;

  constructor(kv: KV, keyOf: (event: E) => string | undefined, event: E, keptMs: number | undefined) {
    this.#kv = kv;
    this.#keyOf = keyOf;
    this.#event = event;
    this.#keptMs = keptMs;
  }

  get state(): KV {
    if (this.#state === undefined) {
      this.#staged = KV.staged(this.#kv, this);
      this.#state = KV.over(this.#kv, this.#staged);
    }
    return this.#state;
  }

  commit(): Promise<boolean> | undefined {
    return this.#staged?.commit();
  }

  marker(): OnceMarker | undefined {
    return KV.markerOf(this.#kv, this.#keyOf(this.#event), this.#keptMs);
  }
}
