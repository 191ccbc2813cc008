/**
 * The in-memory table behind MemoryStore and FileStore, and the one implementation of the
 * {@link StateStore} operations over it. MemoryStore and FileStore are root views (path "");
 * `namespace()` makes child views sharing the same table.
 */
import { byKey, checkTtl, fromJsonText, KeyedView, toJsonText } from "./_keys.ts";
import { foldWrites } from "./_writes.ts";
import { StateError } from "./state-error.ts";
import type {
  JsonValue,
  OnceMarker,
  SetOptions,
  StateEntry,
  StateStore,
  StoreWrite,
  UpdateOptions,
} from "./state-store.ts";

/** A value as JSON text (copy-in/copy-out for free, and the form the journal writes). */
export interface TableEntry {
  text: string;
  /** Epoch milliseconds after which the entry reads as absent. */
  expiresAt?: number;
}

/**
 * Stored key → entry. Every change is reported to `onChange` so FileStore can journal it. Keys are
 * also indexed by their namespace path, so a view lists its own keys without reading every key of
 * the store (a daemon's store holds each bot's keys, and each bot lists a few namespaces at start).
 */
export class Table {
  /** A value that never expires is kept as its text alone (one object less per key). */
  private readonly entries = new Map<string, TableEntry | string>();
  /** Namespace path (the stored key up to its last "/") → the stored keys directly in it. */
  private readonly byPath = new Map<string, Set<string>>();

  constructor(
    readonly now: () => number,
    private readonly onChange: (storedKey: string, entry: TableEntry | undefined) => void = () => {},
  ) {}

  read(storedKey: string): TableEntry | undefined {
    const entry = this.entries.get(storedKey);
    if (entry === undefined) return undefined;
    if (typeof entry === "string") return { text: entry };
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      // Dropped lazily; replay drops expired entries too, so no journal record is needed.
      this.drop(storedKey);
      return undefined;
    }
    return entry;
  }

  write(storedKey: string, entry: TableEntry): void {
    this.put(storedKey, entry);
    this.onChange(storedKey, entry);
  }

  remove(storedKey: string): boolean {
    const existed = this.read(storedKey) !== undefined;
    if (existed) {
      this.drop(storedKey);
      this.onChange(storedKey, undefined);
    }
    return existed;
  }

  /** Live entries whose stored key starts with `prefix`, at any depth. */
  *scan(prefix: string): Generator<[string, TableEntry]> {
    for (const storedKey of [...this.entries.keys()]) {
      if (!storedKey.startsWith(prefix)) continue;
      const entry = this.read(storedKey);
      if (entry !== undefined) yield [storedKey, entry];
    }
  }

  /** Live entries directly in namespace `path` whose stored key starts with `prefix`. */
  *children(path: string, prefix: string): Generator<[string, TableEntry]> {
    const keys = this.byPath.get(path);
    if (keys === undefined) return;
    // The keys first (the caller may write between yields), only those that match: a start lists
    // ten prefixes of the dialogs' namespace, 20,000 keys with 10,000 waiting, that none match.
    // Each key begins with `path`: the character after it turns most away (startsWith is slower).
    const at = path.length;
    const next = prefix.length > at ? prefix.charCodeAt(at) : undefined;
    const matching: string[] = [];
    for (const storedKey of keys)
      if ((next === undefined || storedKey.charCodeAt(at) === next) && storedKey.startsWith(prefix))
        matching.push(storedKey);
    for (const storedKey of matching) {
      const entry = this.read(storedKey);
      if (entry !== undefined) yield [storedKey, entry];
    }
  }

  /** Load without notifying (replaying what is already on disk). */
  load(storedKey: string, entry: TableEntry | undefined): void {
    if (entry === undefined || (entry.expiresAt !== undefined && entry.expiresAt <= this.now())) {
      this.drop(storedKey);
    } else {
      this.put(storedKey, entry);
    }
  }

  private put(storedKey: string, entry: TableEntry): void {
    if (!this.entries.has(storedKey)) {
      const path = pathOf(storedKey);
      let keys = this.byPath.get(path);
      if (keys === undefined) {
        keys = new Set();
        this.byPath.set(path, keys);
      }
      keys.add(storedKey);
    }
    flatten(entry.text);
    this.entries.set(storedKey, entry.expiresAt === undefined ? entry.text : entry);
  }

  private drop(storedKey: string): void {
    if (!this.entries.delete(storedKey)) return;
    const path = pathOf(storedKey);
    const keys = this.byPath.get(path);
    keys?.delete(storedKey);
    if (keys?.size === 0) this.byPath.delete(path);
  }
}

/**
 * Make V8 keep `text` as one string. On Node 20, `JSON.stringify` returns a long result as a tree
 * of the pieces it was built in (a third more memory for a dialog's log, kept as long as the
 * value is); converting it to a number joins them, and the next collection drops the tree. Later
 * Node lines return one string already, and this costs a failed number parse.
 */
function flatten(text: string): void {
  Number(text);
}

/** The namespace path of a stored key: up to and including its last "/" (segments never hold one). */
const pathOf = (storedKey: string): string => storedKey.slice(0, storedKey.lastIndexOf("/") + 1);

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

  async getMany(keys: readonly string[]): Promise<(JsonValue | undefined)[]> {
    return keys.map((key) => {
      const entry = this.table.read(this.stored(key));
      return entry === undefined ? undefined : fromJsonText(entry.text);
    });
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
    for (const [storedKey, entry] of this.table.children(this.path, this.stored(prefix, "prefix"))) {
      const key = this.ownKey(storedKey);
      if (key !== undefined) result.push({ key, value: fromJsonText(entry.text) });
    }
    return result.sort(byKey);
  }

  async applyWrites(writes: readonly StoreWrite[], once?: OnceMarker): Promise<boolean> {
    // One synchronous step: no other caller can interleave, and FileStore's next commit carries
    // the writes and the marker together.
    const marker = once && markerKeyOf(once, this.table);
    if (marker !== undefined && this.table.read(marker) !== undefined) return false;
    const stored = new Map(writes.map((w) => [w.key, this.stored(w.key)]));
    const finals = foldWrites(writes, (key) => this.table.read(stored.get(key)!)?.text);
    const now = this.table.now();
    for (const { key, text, expiry } of finals) {
      const storedKey = stored.get(key)!;
      if (text === undefined) {
        this.table.remove(storedKey);
        continue;
      }
      const expiresAt =
        expiry === "keep"
          ? this.table.read(storedKey)?.expiresAt
          : expiry === "none"
            ? undefined
            : now + expiry;
      this.table.write(storedKey, expiresAt === undefined ? { text } : { text, expiresAt });
    }
    if (marker !== undefined) this.table.write(marker, { text: "1", expiresAt: now + once!.ttlMs });
    return true;
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

  /** The stored key of `key` in this view, for a batch marker written from another view. */
  storedKeyIn(table: Table, key: string): string {
    if (table !== this.table)
      throw new StateError(
        "STATE_INVALID_KEY",
        "A batch's marker must be kept in the same store as its writes.",
      );
    return this.stored(key);
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

function markerKeyOf(once: OnceMarker, table: Table): string {
  if (!(once.store instanceof StoreView))
    throw new StateError(
      "STATE_INVALID_KEY",
      "A batch's marker must be kept in the same store as its writes.",
    );
  return once.store.storedKeyIn(table, once.key);
}
