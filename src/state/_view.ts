/**
 * The one implementation of the {@link StateStore} operations, over a {@link Table} and a
 * stored-key prefix. MemoryStore and FileStore are root views (prefix ""); `namespace()` makes
 * child views sharing the same table.
 */

import { fromJsonText, toJsonText } from "./_json.ts";
import { checkKey, childPrefix, escapeSegment, unescapeSegment } from "./_keys.ts";
import type { Table, TableEntry } from "./_table.ts";
import { StateError } from "./state-error.ts";
import type { JsonValue, SetOptions, StateEntry, StateStore, UpdateOptions } from "./state-store.ts";

/** Shared by a root store and all its views: once closed, every view refuses work. */
export interface Lifecycle {
  closed: boolean;
  description: string;
}

export class StoreView implements StateStore {
  constructor(
    protected readonly table: Table,
    private readonly prefix: string,
    protected readonly lifecycle: Lifecycle,
  ) {}

  async get(key: string): Promise<JsonValue | undefined> {
    const entry = this.table.read(this.stored(key));
    return entry === undefined ? undefined : fromJsonText(entry.text);
  }

  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    const storedKey = this.stored(key);
    this.table.write(storedKey, this.entry(key, value, expiryOf(options, this.table.now)));
  }

  async setIfAbsent(key: string, value: JsonValue, options?: SetOptions): Promise<boolean> {
    const storedKey = this.stored(key);
    const entry = this.entry(key, value, expiryOf(options, this.table.now));
    // Check and write happen in one synchronous step, so no other caller can interleave.
    if (this.table.read(storedKey) !== undefined) return false;
    this.table.write(storedKey, entry);
    return true;
  }

  async update(
    key: string,
    fn: (current: JsonValue | undefined) => JsonValue | undefined,
    options?: UpdateOptions,
  ): Promise<JsonValue | undefined> {
    const storedKey = this.stored(key);
    const ttlExpiry = expiryOf(options, this.table.now);
    const current = this.table.read(storedKey);
    const next = fn(current === undefined ? undefined : fromJsonText(current.text));
    if (next === undefined) {
      this.table.remove(storedKey);
      return undefined;
    }
    this.table.write(storedKey, this.entry(key, next, ttlExpiry ?? current?.expiresAt));
    return next;
  }

  async delete(key: string): Promise<boolean> {
    return this.table.remove(this.stored(key));
  }

  async list(prefix = ""): Promise<StateEntry[]> {
    this.checkOpen();
    const start = this.prefix + escapeSegment(checkKey(prefix, "prefix"));
    const result: StateEntry[] = [];
    for (const [storedKey, entry] of this.table.scan(start)) {
      const rest = storedKey.slice(this.prefix.length);
      if (rest.includes("/")) continue; // a child namespace's key
      result.push({ key: unescapeSegment(rest), value: fromJsonText(entry.text) });
    }
    return result.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  namespace(name: string): StateStore {
    return new StoreView(this.table, childPrefix(this.prefix, name), this.lifecycle);
  }

  protected checkOpen(): void {
    if (this.lifecycle.closed) {
      throw new StateError(
        "STATE_CLOSED",
        `The state store (${this.lifecycle.description}) is closed; open it again before use.`,
      );
    }
  }

  private stored(key: string): string {
    this.checkOpen();
    return this.prefix + escapeSegment(checkKey(key));
  }

  private entry(key: string, value: unknown, expiresAt: number | undefined): TableEntry {
    const text = toJsonText(key, value);
    return expiresAt === undefined ? { text } : { text, expiresAt };
  }
}

function expiryOf(options: SetOptions | undefined, now: () => number): number | undefined {
  const ttlMs = options?.ttlMs;
  if (ttlMs === undefined) return undefined;
  if (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new StateError(
      "STATE_INVALID_VALUE",
      `ttlMs must be a positive number of milliseconds, got ${String(ttlMs)}.`,
    );
  }
  return now() + ttlMs;
}
