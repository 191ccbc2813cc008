import type { JsonValue, SetOptions, StateStore, UpdateOptions } from "./state-store.ts";

/**
 * The typed key-value view a bot sees as `ctx.state`.
 *
 * The type parameters are the caller's promise, not something the store can check: data written by
 * an older version of the bot comes back as it was stored. Validate with zod when that matters.
 * Values must be plain JSON; anything else is refused with `STATE_INVALID_VALUE`.
 *
 * @example
 * ```ts
 * const count = (await ctx.state.get<number>("count")) ?? 0;
 * await ctx.state.set("count", count + 1);
 * await ctx.state.set("seen-recently", true, { ttlMs: 60_000 });
 * ```
 */
export class KV {
  constructor(private readonly store: StateStore) {}

  async get<T = JsonValue>(key: string): Promise<T | undefined> {
    return (await this.store.get(key)) as T | undefined;
  }

  async set<T = JsonValue>(key: string, value: T, options?: SetOptions): Promise<void> {
    await this.store.set(key, value as JsonValue, options);
  }

  /** Resolves `true` if this call created the key (exactly one concurrent caller wins). */
  async setIfAbsent<T = JsonValue>(key: string, value: T, options?: SetOptions): Promise<boolean> {
    return this.store.setIfAbsent(key, value as JsonValue, options);
  }

  /** Atomic read-modify-write; `fn` must be synchronous and pure; returning `undefined` deletes. */
  async update<T = JsonValue>(
    key: string,
    fn: (current: T | undefined) => T | undefined,
    options?: UpdateOptions,
  ): Promise<T | undefined> {
    const next = await this.store.update(
      key,
      (current) => fn(current as T | undefined) as JsonValue | undefined,
      options,
    );
    return next as T | undefined;
  }

  async delete(key: string): Promise<boolean> {
    return this.store.delete(key);
  }

  /** Keys starting with `prefix`, sorted by key. */
  async list<T = JsonValue>(prefix = ""): Promise<Array<{ key: string; value: T }>> {
    return (await this.store.list(prefix)) as Array<{ key: string; value: T }>;
  }
}
