/**
 * The in-memory table behind MemoryStore and FileStore, and the one implementation of the
 * {@link StateStore} operations over it. MemoryStore and FileStore are root views (path "");
 * `namespace()` makes child views sharing the same table.
 */
import { byKey, checkTtl, fromJsonText, KeyedView, toJsonText } from "./_keys.ts";
import type { JsonValue, SetOptions, StateEntry, StateStore, UpdateOptions } from "./state-store.ts";

/** A value as JSON text (copy-in/copy-out for free, and the form the journal writes). */
export interface TableEntry {
  text: string;
  /** Epoch milliseconds after which the entry reads as absent. */
  expiresAt?: number;
}

/** Stored key → entry. Every change is reported to `onChange` so FileStore can journal it. */
export class Table {
  private readonly entries = new Map<string, TableEntry>();

  constructor(
    readonly now: () => number,
    private readonly onChange: (storedKey: string, entry: TableEntry | undefined) => void = () => {},
  ) {}

  read(storedKey: string): TableEntry | undefined {
    const entry = this.entries.get(storedKey);
    if (entry === undefined) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      // Dropped lazily; replay drops expired entries too, so no journal record is needed.
      this.entries.delete(storedKey);
      return undefined;
    }
    return entry;
  }

  write(storedKey: string, entry: TableEntry): void {
    this.entries.set(storedKey, entry);
    this.onChange(storedKey, entry);
  }

  remove(storedKey: string): boolean {
    const existed = this.read(storedKey) !== undefined;
    if (existed) {
      this.entries.delete(storedKey);
      this.onChange(storedKey, undefined);
    }
    return existed;
  }

  /** Live entries whose stored key starts with `prefix`. */
  *scan(prefix: string): Generator<[string, TableEntry]> {
    for (const storedKey of [...this.entries.keys()]) {
      if (!storedKey.startsWith(prefix)) continue;
      const entry = this.read(storedKey);
      if (entry !== undefined) yield [storedKey, entry];
    }
  }

  /** Load without notifying (replaying what is already on disk). */
  load(storedKey: string, entry: TableEntry | undefined): void {
    if (entry === undefined || (entry.expiresAt !== undefined && entry.expiresAt <= this.now())) {
      this.entries.delete(storedKey);
    } else {
      this.entries.set(storedKey, entry);
    }
  }
}

export class StoreView extends KeyedView implements StateStore {
  constructor(
    protected readonly table: Table,
    path: string,
    lifecycle: { closed: boolean; description: string },
  ) {
    super(path, lifecycle);
  }

  async get(key: string): Promise<JsonValue | undefined> {
    const entry = this.table.read(this.stored(key));
    return entry === undefined ? undefined : fromJsonText(entry.text);
  }

  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    this.table.write(this.stored(key), this.entry(key, value, this.expiryOf(options)));
  }

  async setIfAbsent(key: string, value: JsonValue, options?: SetOptions): Promise<boolean> {
    const storedKey = this.stored(key);
    const entry = this.entry(key, value, this.expiryOf(options));
    // Check and write in one synchronous step, so no other caller can interleave.
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
    const ttlExpiry = this.expiryOf(options);
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
    const result: StateEntry[] = [];
    for (const [storedKey, entry] of this.table.scan(this.stored(prefix, "prefix"))) {
      const key = this.ownKey(storedKey);
      if (key !== undefined) result.push({ key, value: fromJsonText(entry.text) });
    }
    return result.sort(byKey);
  }

  async clear(): Promise<number> {
    this.checkOpen();
    let deleted = 0;
    for (const [storedKey] of this.table.scan(this.path)) if (this.table.remove(storedKey)) deleted++;
    return deleted;
  }

  namespace(name: string): StateStore {
    return new StoreView(this.table, this.childPrefix(name), this.lifecycle);
  }

  private expiryOf(options: SetOptions | undefined): number | undefined {
    const ttlMs = checkTtl(options);
    return ttlMs === undefined ? undefined : this.table.now() + ttlMs;
  }

  private entry(key: string, value: unknown, expiresAt: number | undefined): TableEntry {
    const text = toJsonText(key, value);
    return expiresAt === undefined ? { text } : { text, expiresAt };
  }
}
