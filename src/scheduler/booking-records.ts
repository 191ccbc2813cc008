/**
 * The records of recurring bookings (state `<bot>/bookings/<id>`) and their copy in memory. The
 * copy changes only once the store took a write: after a refused write, a retry sees what the
 * store holds and writes it again.
 */
import type { Logger } from "pino";
import type { JsonValue, StateStore } from "../state/state-store.ts";
import { type BookingRecord, BookingRecordSchema } from "./booking-server.ts";

export class BookingRecords {
  readonly #store: StateStore;
  readonly #flush: () => Promise<void>;
  readonly #records = new Map<string, BookingRecord>();

  /** `flush` makes the writes durable: a booking must never be forgotten once it exists on the server. */
  constructor(store: StateStore, flush: () => Promise<void>) {
    this.#store = store;
    this.#flush = flush;
  }

  get size(): number {
    return this.#records.size;
  }

  get(id: string): BookingRecord | undefined {
    return this.#records.get(id);
  }

  /** Every record by announcement id (a copy). */
  all(): [string, BookingRecord][] {
    return [...this.#records];
  }

  /** The times (ms) of the bookings still to go out. */
  due(): number[] {
    return [...this.#records.values()].flatMap((r) => (r.settled ? [] : [r.target.timestamp * 1000]));
  }

  /** Read the records from the store; an unreadable one is deleted (logged). */
  async load(log: Logger): Promise<void> {
    for (const { key, value } of await this.#store.list()) {
      const parsed = BookingRecordSchema.safeParse(value);
      if (parsed.success) {
        this.#records.set(key, parsed.data);
        continue;
      }
      log.warn({ announcement: key }, "unreadable booking record dropped; the booking is re-checked");
      await this.forget(key);
    }
  }

  async save(id: string, rec: BookingRecord): Promise<void> {
    await this.#store.set(id, rec as unknown as JsonValue);
    await this.#flush();
    this.#records.set(id, rec);
  }

  async forget(id: string): Promise<void> {
    await this.#store.delete(id);
    await this.#flush();
    this.#records.delete(id);
  }
}
