/**
 * The in-memory table behind MemoryStore and FileStore: stored key → JSON text and expiry.
 *
 * Values are kept as JSON text, which gives copy-in/copy-out semantics for free and is exactly the
 * form the journal writes. Every change is reported to `onChange` so FileStore can journal it.
 */

export interface TableEntry {
  text: string;
  /** Epoch milliseconds after which the entry reads as absent. */
  expiresAt?: number;
}

export type ChangeListener = (storedKey: string, entry: TableEntry | undefined) => void;

export class Table {
  private readonly entries = new Map<string, TableEntry>();

  constructor(
    readonly now: () => number,
    private readonly onChange: ChangeListener = () => {},
  ) {}

  get size(): number {
    return this.entries.size;
  }

  read(storedKey: string): TableEntry | undefined {
    const entry = this.entries.get(storedKey);
    if (entry === undefined) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      // Expired entries are dropped lazily; replay drops them too, so no journal record is needed.
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

  /** Load without notifying (used when replaying what is already on disk). */
  load(storedKey: string, entry: TableEntry | undefined): void {
    if (entry === undefined || (entry.expiresAt !== undefined && entry.expiresAt <= this.now())) {
      this.entries.delete(storedKey);
    } else {
      this.entries.set(storedKey, entry);
    }
  }
}
