/**
 * The steps that keep one announcement's next occurrence booked: book it (adopting a booking
 * already on the server), settle a booking the server sent or that was cancelled, and decide what
 * becomes of a booking the server failed to send (moved to go out now once, else dropped and the
 * next one booked). RecurringBookings runs them on its serial chain.
 */
import type { Logger } from "pino";
import { isApiError } from "../api/errors.ts";
import { failpoint } from "../effects/failpoints.ts";
import { toSeconds } from "../effects/schedule/normalize.ts";
import type { Clock } from "../time/clock.ts";
import type { ScheduledMessage } from "../wire/records.ts";
import { DROPPED, decideFailed } from "./booking-policy.ts";
import type { BookingRecords } from "./booking-records.ts";
import {
  type AnnouncementTarget,
  type BookingRecord,
  type BookingServer,
  contentHash,
} from "./booking-server.ts";
import type { RecurringAnnouncement } from "./declarations.ts";
import type { FailureNotes } from "./failure-notes.ts";
import type { SchedulerStats } from "./scheduler-stats.ts";
import { type CompiledSchedule, occurrenceKey } from "./timing/occurrences.ts";

/** A declared announcement (`bot.recurring(id, …)`), its schedule compiled. */
export interface Announcement {
  id: string;
  spec: RecurringAnnouncement;
  schedule: CompiledSchedule;
}

export interface OccurrenceBookerOptions {
  server: BookingServer;
  records: BookingRecords;
  /** Told of each failed booking, to explain it when the server's note about it comes. */
  notes: FailureNotes;
  stats: SchedulerStats;
  log: Logger;
  clock: Clock;
}

/** The server sends at whole-minute checks, and clocks differ a little. */
const DELIVERY_SLACK_MS = 2 * 60_000;
const SERVER_PAST = /in the future/i;

export class OccurrenceBooker {
  readonly #o: OccurrenceBookerOptions;

  constructor(options: OccurrenceBookerOptions) {
    this.#o = options;
  }

  /**
   * Book the first occurrence after `after`: adopt a matching booking already on the server,
   * else write the intent, POST, write the id. An occurrence the server calls past is skipped.
   */
  async bookNext(
    a: Announcement,
    target: AnnouncementTarget,
    after: number,
    known?: ScheduledMessage[],
    claimed: Set<number> = new Set(),
  ): Promise<void> {
    let cursor = after;
    let list = known;
    for (let attempt = 0; ; attempt++) {
      const occurrence = a.schedule.next(new Date(cursor));
      if (occurrence === undefined) {
        await this.#o.records.forget(a.id);
        this.#o.log.info({ announcement: a.id }, "announcement has no further occurrences");
        return;
      }
      const content = await this.#o.server.content(a.id, a.spec, occurrence);
      const { specHash, ...recipient } = target;
      const record: BookingRecord = {
        occurrence: occurrence.toISOString(),
        key: occurrenceKey(a.id, occurrence),
        specHash,
        target: {
          ...recipient,
          ...(recipient.type === "stream"
            ? { topic: this.#o.server.topicFor(a.id, a.spec, occurrence) }
            : {}),
          contentHash: contentHash(content),
          timestamp: toSeconds(occurrence.getTime()),
        },
      };
      list ??= await this.#o.server.list();
      const existing = list.find(
        (sm) => !sm.failed && !claimed.has(sm.scheduled_message_id) && this.#o.server.matches(sm, record),
      );
      const log = { announcement: a.id, occurrence: record.occurrence };
      if (existing) {
        claimed.add(existing.scheduled_message_id);
        await this.#o.records.save(a.id, { ...record, scheduledMessageId: existing.scheduled_message_id });
        this.#o.stats.adopted++;
        this.#o.log.info(
          { ...log, scheduledMessageId: existing.scheduled_message_id },
          "adopted the booking found on the server",
        );
        return;
      }
      // The intent first: if the process dies after the POST, the next start recognises the booking.
      await this.#o.records.save(a.id, record);
      try {
        const id = await this.#o.server.create(record.target, content);
        failpoint("booking-posted");
        claimed.add(id);
        await this.#o.records.save(a.id, { ...record, scheduledMessageId: id });
        this.#o.stats.booked++;
        this.#o.log.info({ ...log, scheduledMessageId: id }, "booked the next occurrence");
        return;
      } catch (err) {
        if (!(isApiError(err) && SERVER_PAST.test(err.msg)) || attempt >= 4) throw err;
        this.#o.log.warn(log, "the occurrence passed before it could be booked; booking the one after");
        cursor = occurrence.getTime();
        list = undefined;
      }
    }
  }

  /** {@link decideFailed} on a failed booking: its record once moved to go out now, or undefined (dropped). */
  async handleFailed(
    a: Announcement,
    rec: BookingRecord,
    sm: ScheduledMessage,
    target: AnnouncementTarget,
    list?: ScheduledMessage[],
    claimed?: Set<number>,
  ): Promise<BookingRecord | undefined> {
    this.#o.stats.failed++;
    this.#o.notes.failed(sm.scheduled_delivery_timestamp, { announcement: a.id, occurrence: rec.occurrence });
    const now = this.#o.clock.now();
    const occurrenceMs = Date.parse(rec.occurrence);
    // Moved from its recorded time: rescheduled already, its record not written.
    const retried = rec.retried === true || sm.scheduled_delivery_timestamp !== rec.target.timestamp;
    const decision = decideFailed({ occurrenceMs, retried, nowMs: now });
    const log = {
      announcement: a.id,
      occurrence: rec.occurrence,
      lateMinutes: Math.round((now - occurrenceMs) / 60_000),
    };
    if (decision.action === "reschedule") {
      const timestamp = toSeconds(decision.atMs);
      await this.#o.server.update(sm.scheduled_message_id, { scheduled_delivery_timestamp: timestamp });
      const moved: BookingRecord = { ...rec, retried: true, target: { ...rec.target, timestamp } };
      await this.#o.records.save(a.id, moved);
      this.#o.stats.rescheduled++;
      this.#o.log.warn(
        log,
        "the server did not send the announcement; rescheduled it to go out in a minute (once)",
      );
      return moved;
    }
    await this.#o.server.delete(sm.scheduled_message_id);
    await this.#o.records.save(a.id, { ...rec, settled: true });
    this.#o.log.error(log, DROPPED[decision.reason]);
    const rest = list?.filter((s) => s.scheduled_message_id !== sm.scheduled_message_id);
    await this.bookNext(a, target, Math.max(now, occurrenceMs), rest, claimed);
    return undefined;
  }

  /**
   * A booking disappeared: sent (at or after its time), or cancelled before it. Recorded before it
   * is logged and counted, so that a retry of booking the next one does neither again.
   */
  async settle(a: Announcement, rec: BookingRecord): Promise<void> {
    await this.#o.records.save(a.id, { ...rec, settled: true });
    const sent = this.#o.clock.now() + DELIVERY_SLACK_MS >= rec.target.timestamp * 1000;
    const log = { announcement: a.id, occurrence: rec.occurrence };
    if (sent) {
      this.#o.stats.delivered++;
      this.#o.log.info(log, "announcement delivered");
    } else {
      this.#o.stats.cancelled++;
      this.#o.log.info(log, "booking cancelled before its time; that occurrence is skipped");
    }
  }
}
