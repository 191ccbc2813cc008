/**
 * What the scheduler remembers per recurring announcement (state `<bot>/bookings/<id>`): which
 * occurrence is booked, under which server id, for which version of the announcement, and how to
 * recognise the booking on the server if the process died before the id was written.
 */
import { z } from "zod";
import type { JsonValue, StateStore } from "../state/state-store.ts";

const BookingRecordSchema = z.object({
  /** The occurrence booked, ISO UTC. */
  occurrence: z.string(),
  /** `occurrenceKey(id, occurrence)`: the booking's identity, the same whichever process computes it. */
  key: z.string(),
  /** Digest of cron, time zone and resolved recipient; a change means "re-book". */
  specHash: z.string(),
  /** Absent while the POST is in flight (written just before it). */
  scheduledMessageId: z.number().int().optional(),
  /** True once a failed booking was moved to a new time (done at most once per occurrence). */
  retried: z.boolean().optional(),
  /** How the booking looks on the server. */
  target: z.object({
    type: z.enum(["stream", "private"]),
    to: z.union([z.number().int(), z.array(z.number().int())]),
    topic: z.string().optional(),
    contentHash: z.string(),
    /** UNIX seconds the server will send at (the occurrence, or later after a retry). */
    timestamp: z.number().int(),
  }),
});

export type BookingRecord = z.infer<typeof BookingRecordSchema>;

/** Reads and writes booking records, dropping (and reporting) any that do not parse. */
export class BookingRecords {
  readonly #store: StateStore;
  readonly #flush: () => Promise<void>;

  constructor(store: StateStore, flush: () => Promise<void>) {
    this.#store = store;
    this.#flush = flush;
  }

  /** Every record by announcement id, and the keys of records that were unreadable. */
  async load(): Promise<{ records: Map<string, BookingRecord>; unreadable: string[] }> {
    const records = new Map<string, BookingRecord>();
    const unreadable: string[] = [];
    for (const { key, value } of await this.#store.list()) {
      const parsed = BookingRecordSchema.safeParse(value);
      if (parsed.success) records.set(key, parsed.data);
      else unreadable.push(key);
    }
    return { records, unreadable };
  }

  /** Write and make durable: a booking must never be forgotten once it exists on the server. */
  async put(id: string, record: BookingRecord): Promise<void> {
    await this.#store.set(id, record as unknown as JsonValue);
    await this.#flush();
  }

  async remove(id: string): Promise<void> {
    await this.#store.delete(id);
    await this.#flush();
  }
}
