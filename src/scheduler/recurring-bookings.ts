/**
 * Recurring announcements kept booked on the server: for each one, exactly the next occurrence is
 * a scheduled message, so it goes out even while the daemon is down. When the server sends it
 * (a `remove` event), the next one is booked. At start, after a lost queue, and a while after each
 * occurrence, the bookings are reconciled with GET /scheduled_messages.
 *
 * Every step runs on one serial chain, so an event and a reconciliation never race.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { isApiError } from "../api/errors.ts";
import type { RecurringAnnouncement } from "../bot/bot-api.ts";
import type { Clock, TimerHandle } from "../helpers/clock.ts";
import { type CompiledSchedule, compileSchedule, occurrenceKey } from "../helpers/schedule/occurrences.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { ScheduledMessage } from "../wire/records.ts";
import { normalizeContent, toSeconds } from "./_normalize.ts";
import {
  type AnnouncementTarget,
  announcementTarget,
  contentHash,
  matchesBooking,
} from "./announcement-target.ts";
import type { BookingRecord, BookingRecords } from "./booking-records.ts";
import type { SchedulerStats } from "./scheduler-stats.ts";

export interface RecurringBookingsOptions {
  client: Client;
  records: BookingRecords;
  log: Logger;
  clock: Clock;
  stats: SchedulerStats;
  /**
   * A failed booking whose occurrence is at most this old is moved to "now" once; older ones, or
   * a second failure, are dropped and the next occurrence is booked. Default 30 minutes.
   */
  retryFailedWithinMs?: number;
  /** The server's display name of the empty topic (read as ""). */
  emptyTopicName?: () => string;
}

interface Announcement {
  id: string;
  spec: RecurringAnnouncement;
  schedule: CompiledSchedule;
}

/** The server sends at whole-minute checks, and clocks differ a little. */
const DELIVERY_SLACK_MS = 2 * 60_000;
/** By then the server has sent a booking or marked it failed (it gives up at 10 minutes late). */
const CHECK_AFTER_MS = 12 * 60_000;
const RETRY_MIN_MS = 60_000;
const RETRY_MAX_MS = 30 * 60_000;
/** How far ahead of "now" a failed booking is moved, so the server's next minute check takes it. */
const RESCHEDULE_LEAD_MS = 60_000;
const SERVER_PAST = /in the future/i;

export class RecurringBookings {
  readonly #o: RecurringBookingsOptions;
  readonly #announcements = new Map<string, Announcement>();
  #records = new Map<string, BookingRecord>();
  #chain: Promise<void> = Promise.resolve();
  #started = false;
  #stopped = false;
  #selfId: number | undefined;
  #retryTimer: TimerHandle | undefined;
  #retryDelay = RETRY_MIN_MS;
  #checkTimer: TimerHandle | undefined;

  /** Throws `SCHEDULE_INVALID` (ScheduleError) for an announcement whose cron or time zone is bad. */
  constructor(options: RecurringBookingsOptions, declarations: ReadonlyMap<string, RecurringAnnouncement>) {
    this.#o = options;
    for (const [id, spec] of declarations) {
      this.#announcements.set(id, { id, spec, schedule: compileSchedule(spec, `bot.recurring("${id}")`) });
    }
  }

  /** Current bookings by announcement id (a copy). */
  get bookings(): Map<string, Readonly<BookingRecord>> {
    return new Map(this.#records);
  }

  /** Load the records and reconcile them with the server. Errors are logged and retried later. */
  async start(): Promise<void> {
    this.#started = true;
    await this.#enqueue(async () => {
      const { records, unreadable } = await this.#o.records.load();
      for (const key of unreadable) {
        this.#o.log.warn(
          { announcement: key },
          "unreadable booking record dropped; the booking is re-checked",
        );
        await this.#o.records.remove(key);
      }
      this.#records = records;
      if (this.#announcements.size > 0 || records.size > 0) await this.#reconcileAll();
    });
  }

  /** Reconcile again (after a new event queue: events may have been missed). */
  resync(): void {
    if (this.#started) void this.#enqueue(() => this.#reconcileAll());
  }

  /** A `scheduled_messages` event of this bot. */
  onEvent(event: ServerEvent): void {
    if (!this.#started || event.type !== "scheduled_messages") return;
    const e = event as { op?: string; scheduled_message_id?: number; scheduled_message?: ScheduledMessage };
    if (e.op === "remove" && typeof e.scheduled_message_id === "number") {
      const messageId = e.scheduled_message_id;
      void this.#enqueue(async () => {
        const found = this.#ownerOf(messageId);
        if (!found) return;
        const [a, rec] = found;
        this.#gone(a, rec);
        const target = await this.#target(a);
        await this.#bookNext(a, target, Math.max(this.#o.clock.now(), Date.parse(rec.occurrence)));
        this.#armCheck();
      });
    } else if (e.op === "update" && e.scheduled_message?.failed === true) {
      const sm = e.scheduled_message;
      void this.#enqueue(async () => {
        const found = this.#ownerOf(sm.scheduled_message_id);
        if (found) await this.#handleFailed(found[0], found[1], sm, await this.#target(found[0]));
        this.#armCheck();
      });
    }
  }

  /** Stop timers and wait for the step in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#retryTimer) this.#o.clock.clearTimeout(this.#retryTimer);
    if (this.#checkTimer) this.#o.clock.clearTimeout(this.#checkTimer);
    this.#retryTimer = this.#checkTimer = undefined;
    await this.#chain;
  }

  #enqueue(step: () => Promise<void>): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      if (this.#stopped) return;
      try {
        await step();
      } catch (err) {
        this.#o.stats.bookingErrors++;
        this.#o.log.error({ err }, "scheduler step failed; retrying");
        this.#scheduleRetry();
      }
    });
    return this.#chain;
  }

  async #reconcileAll(): Promise<void> {
    const list = await this.#list();
    const claimed = new Set<number>();
    for (const [id, rec] of [...this.#records]) {
      if (this.#announcements.has(id)) continue;
      // Declarations are the desired state: a booking of an announcement no longer declared goes.
      const sm = this.#find(rec, list, claimed);
      if (sm) await this.#delete(sm.scheduled_message_id);
      await this.#forget(id);
      this.#o.log.info({ announcement: id }, "announcement no longer declared; its booking was cancelled");
    }
    let failures = 0;
    for (const a of this.#announcements.values()) {
      try {
        await this.#reconcileOne(a, list, claimed);
      } catch (err) {
        failures++;
        this.#o.stats.bookingErrors++;
        this.#o.log.error(
          { err, announcement: a.id },
          `announcement "${a.id}" could not be booked; retrying`,
        );
      }
    }
    if (failures > 0) this.#scheduleRetry();
    else this.#retryDelay = RETRY_MIN_MS;
    this.#armCheck();
  }

  async #reconcileOne(a: Announcement, list: ScheduledMessage[], claimed: Set<number>): Promise<void> {
    const target = await this.#target(a);
    const now = this.#o.clock.now();
    let rec = this.#records.get(a.id);
    if (!rec) return this.#bookNext(a, target, now, list, claimed);
    const sm = this.#find(rec, list, claimed);
    if (!sm) {
      // A booking we never saw the id of: the POST did not land (or was sent already). Either
      // way the next occurrence from now is the one to book.
      if (rec.scheduledMessageId === undefined || rec.specHash !== target.specHash) {
        return this.#bookNext(a, target, now, list, claimed);
      }
      this.#gone(a, rec);
      return this.#bookNext(a, target, Math.max(now, Date.parse(rec.occurrence)), list, claimed);
    }
    claimed.add(sm.scheduled_message_id);
    if (rec.scheduledMessageId === undefined) {
      rec = { ...rec, scheduledMessageId: sm.scheduled_message_id };
      await this.#save(a.id, rec);
      this.#o.stats.adopted++;
      this.#o.log.info(
        { announcement: a.id, occurrence: rec.occurrence, scheduledMessageId: sm.scheduled_message_id },
        "found the booking made just before a crash; adopted it",
      );
    }
    if (rec.specHash !== target.specHash) {
      await this.#delete(sm.scheduled_message_id);
      this.#o.stats.replaced++;
      this.#o.log.info(
        { announcement: a.id, occurrence: rec.occurrence },
        "announcement changed; replacing its booking",
      );
      return this.#bookNext(a, target, now, list, claimed);
    }
    if (sm.failed) return this.#handleFailed(a, rec, sm, target, list, claimed);
    const content = await this.#content(a, new Date(rec.occurrence));
    if (normalizeContent(sm.content) !== normalizeContent(content)) {
      await this.#o.client.scheduledMessages.update(sm.scheduled_message_id, { content });
      await this.#save(a.id, { ...rec, target: { ...rec.target, contentHash: contentHash(content) } });
      this.#o.log.info(
        { announcement: a.id, occurrence: rec.occurrence },
        "content changed; updated the booking",
      );
    }
  }

  /**
   * Book the first occurrence after `after`: adopt a matching booking already on the server,
   * else write the intent, POST, write the id. An occurrence the server calls past is skipped.
   */
  async #bookNext(
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
        await this.#forget(a.id);
        this.#o.log.info({ announcement: a.id }, "announcement has no further occurrences");
        return;
      }
      const content = await this.#content(a, occurrence);
      const record: BookingRecord = {
        occurrence: occurrence.toISOString(),
        key: occurrenceKey(a.id, occurrence),
        specHash: target.specHash,
        target: {
          type: target.type,
          to: target.to,
          ...(target.topic !== undefined ? { topic: target.topic } : {}),
          contentHash: contentHash(content),
          timestamp: toSeconds(occurrence.getTime()),
        },
      };
      list ??= await this.#list();
      const existing = list.find(
        (sm) => !sm.failed && !claimed.has(sm.scheduled_message_id) && this.#matches(sm, record),
      );
      const log = { announcement: a.id, occurrence: record.occurrence };
      if (existing) {
        claimed.add(existing.scheduled_message_id);
        await this.#save(a.id, { ...record, scheduledMessageId: existing.scheduled_message_id });
        this.#o.stats.adopted++;
        this.#o.log.info(
          { ...log, scheduledMessageId: existing.scheduled_message_id },
          "adopted the booking found on the server",
        );
        return;
      }
      // The intent first: if the process dies after the POST, the next start recognises the booking.
      await this.#save(a.id, record);
      try {
        const { scheduled_message_id } = await this.#o.client.scheduledMessages.create({
          type: target.type === "stream" ? "channel" : "direct",
          to: target.to,
          ...(target.topic !== undefined ? { topic: target.topic } : {}),
          content,
          scheduled_delivery_timestamp: record.target.timestamp,
          read_by_sender: true,
        });
        claimed.add(scheduled_message_id);
        await this.#save(a.id, { ...record, scheduledMessageId: scheduled_message_id });
        this.#o.stats.booked++;
        this.#o.log.info({ ...log, scheduledMessageId: scheduled_message_id }, "booked the next occurrence");
        return;
      } catch (err) {
        if (!(isApiError(err) && SERVER_PAST.test(err.msg)) || attempt >= 4) throw err;
        this.#o.log.warn(log, "the occurrence passed before it could be booked; booking the one after");
        cursor = occurrence.getTime();
        list = undefined;
      }
    }
  }

  /** The policy for a booking the server marked failed (see the README's scheduling section). */
  async #handleFailed(
    a: Announcement,
    rec: BookingRecord,
    sm: ScheduledMessage,
    target: AnnouncementTarget,
    list?: ScheduledMessage[],
    claimed?: Set<number>,
  ): Promise<void> {
    this.#o.stats.failed++;
    const now = this.#o.clock.now();
    const occurrence = Date.parse(rec.occurrence);
    const lateMinutes = Math.round((now - occurrence) / 60_000);
    const within = this.#o.retryFailedWithinMs ?? 30 * 60_000;
    const log = { announcement: a.id, occurrence: rec.occurrence, lateMinutes };
    if (!rec.retried && now - occurrence <= within) {
      const timestamp = toSeconds(now + RESCHEDULE_LEAD_MS);
      await this.#o.client.scheduledMessages.update(sm.scheduled_message_id, {
        scheduled_delivery_timestamp: timestamp,
      });
      await this.#save(a.id, { ...rec, retried: true, target: { ...rec.target, timestamp } });
      this.#o.stats.rescheduled++;
      this.#o.log.warn(
        log,
        "the server could not send the announcement on time; rescheduled it to go out now (once)",
      );
      return;
    }
    this.#o.log.error(
      log,
      rec.retried
        ? "the announcement failed again after a reschedule; dropped it and booking the next occurrence"
        : "the announcement failed and is too late to send; dropped it and booking the next occurrence",
    );
    await this.#delete(sm.scheduled_message_id);
    const fresh = list?.filter((s) => s.scheduled_message_id !== sm.scheduled_message_id);
    await this.#bookNext(a, target, Math.max(now, occurrence), fresh, claimed);
  }

  /** A booking disappeared: sent (at or after its time), or cancelled before it. */
  #gone(a: Announcement, rec: BookingRecord): void {
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

  #find(rec: BookingRecord, list: ScheduledMessage[], claimed: Set<number>): ScheduledMessage | undefined {
    return list.find((sm) =>
      claimed.has(sm.scheduled_message_id)
        ? false
        : rec.scheduledMessageId !== undefined
          ? sm.scheduled_message_id === rec.scheduledMessageId
          : this.#matches(sm, rec),
    );
  }

  #matches(sm: ScheduledMessage, rec: BookingRecord): boolean {
    return matchesBooking(sm, rec.target, this.#o.emptyTopicName?.() ?? "general chat");
  }

  #ownerOf(messageId: number): [Announcement, BookingRecord] | undefined {
    for (const [id, rec] of this.#records) {
      const a = this.#announcements.get(id);
      if (a && rec.scheduledMessageId === messageId) return [a, rec];
    }
    return undefined;
  }

  #target(a: Announcement): Promise<AnnouncementTarget> {
    return announcementTarget(
      this.#o.client,
      a.id,
      a.spec,
      async () => (this.#selfId ??= (await this.#o.client.users.me()).user_id),
      this.#o.emptyTopicName?.() ?? "general chat",
    );
  }

  async #content(a: Announcement, occurrence: Date): Promise<string> {
    const content = typeof a.spec.content === "function" ? await a.spec.content(occurrence) : a.spec.content;
    if (typeof content !== "string" || normalizeContent(content) === "") {
      throw new Error(`announcement "${a.id}": its content is empty for ${occurrence.toISOString()}`);
    }
    return content;
  }

  async #list(): Promise<ScheduledMessage[]> {
    return (await this.#o.client.scheduledMessages.list()).scheduled_messages;
  }

  async #delete(messageId: number): Promise<void> {
    try {
      await this.#o.client.scheduledMessages.delete(messageId);
    } catch (err) {
      if (!(isApiError(err) && err.status === 404)) throw err; // already sent or deleted: fine
    }
  }

  async #save(id: string, rec: BookingRecord): Promise<void> {
    this.#records.set(id, rec);
    await this.#o.records.put(id, rec);
  }

  async #forget(id: string): Promise<void> {
    this.#records.delete(id);
    await this.#o.records.remove(id);
  }

  #scheduleRetry(): void {
    if (this.#stopped || this.#retryTimer) return;
    const delay = this.#retryDelay;
    this.#retryDelay = Math.min(delay * 2, RETRY_MAX_MS);
    this.#retryTimer = this.#o.clock.setTimeout(() => {
      this.#retryTimer = undefined;
      this.resync();
    }, delay);
  }

  /** A safety net for missed events: look again a while after the earliest booking is due. */
  #armCheck(): void {
    if (this.#checkTimer) this.#o.clock.clearTimeout(this.#checkTimer);
    this.#checkTimer = undefined;
    if (this.#stopped) return;
    const now = this.#o.clock.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (const rec of this.#records.values()) {
      const at = rec.target.timestamp * 1000 + CHECK_AFTER_MS;
      if (at > now && at < earliest) earliest = at;
    }
    if (earliest === Number.POSITIVE_INFINITY) return;
    this.#checkTimer = this.#o.clock.setTimeout(() => {
      this.#checkTimer = undefined;
      this.resync();
    }, earliest - now);
  }
}
