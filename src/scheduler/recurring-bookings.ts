/**
 * Recurring announcements kept booked on the server: for each one, exactly the next occurrence is
 * a scheduled message, so it goes out even while the daemon is down. When the server sends it
 * (a `remove` event), the next one is booked. At start, after a lost queue, and a while after each
 * occurrence, the bookings are reconciled with GET /scheduled_messages.
 * Every step runs on one serial chain, so an event and a reconciliation never race; the steps on
 * one announcement's bookings are occurrence-booker.ts's.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { failpoint } from "../effects/failpoints.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { ScheduledMessage } from "../wire/records.ts";
import { applyEdits, type BookingEdits } from "./booking-edits.ts";
import { BookingMistakes } from "./booking-mistakes.ts";
import { ReconcileTimers, sayFailure } from "./booking-policy.ts";
import { BookingRecords } from "./booking-records.ts";
import { type BookingRecord, BookingServer, type BookingServerOptions } from "./booking-server.ts";
import type { RecurringAnnouncement } from "./declarations.ts";
import { FailureNotes } from "./failure-notes.ts";
import { type Announcement, OccurrenceBooker } from "./occurrence-booker.ts";
import type { SchedulerStats } from "./scheduler-stats.ts";
import { compileSchedule } from "./timing/occurrences.ts";

/** Announcements reconciled at once (their content functions called, their bookings made). */
export const RECONCILE_AT_ONCE = 4;

export interface RecurringBookingsOptions {
  client: Client;
  /** The bot's `bookings` namespace: a record per announcement id. */
  store: StateStore;
  /** Make state writes durable: a booking must never be forgotten once it exists on the server. */
  flush(): Promise<void>;
  log: Logger;
  clock: Clock;
  stats: SchedulerStats;
  /** The server's empty topic name and longest content and topic, once known; the bot's lookups. */
  server: BookingServerOptions;
  /** No `scheduled_messages` events come (webhook mode): each booking is looked at soon after its time. */
  blind?: boolean;
}

export class RecurringBookings {
  readonly #o: RecurringBookingsOptions;
  readonly #server: BookingServer;
  readonly #timers: ReconcileTimers;
  readonly #announcements = new Map<string, Announcement>();
  readonly #records: BookingRecords;
  readonly #edits: BookingEdits;
  readonly #notes = new FailureNotes();
  readonly #mistakes = new BookingMistakes();
  readonly #booker: OccurrenceBooker;
  #chain: Promise<void> = Promise.resolve();
  #started = false;
  #stopped = false;

  /** Throws `SCHEDULE_INVALID` (ScheduleError) for an announcement whose cron or time zone is bad. */
  constructor(options: RecurringBookingsOptions, declarations: ReadonlyMap<string, RecurringAnnouncement>) {
    this.#o = options;
    this.#server = new BookingServer(options.client, { clock: options.clock, ...options.server });
    this.#records = new BookingRecords(options.store, options.flush);
    this.#timers = new ReconcileTimers(options.clock, () => this.resync(), options.blind);
    const { log, server, stats, clock } = options;
    const [records, notes] = [this.#records, this.#notes];
    this.#booker = new OccurrenceBooker({ server: this.#server, records, notes, stats, log, clock });
    this.#edits = {
      server: this.#server,
      records: this.#records,
      log,
      emptyTopicName: server.emptyTopicName,
    };
    for (const [id, spec] of declarations) {
      this.#announcements.set(id, { id, spec, schedule: compileSchedule(spec, `bot.recurring("${id}")`) });
    }
  }

  /** Current bookings by announcement id (a copy; none for one whose next is still to book). */
  get bookings(): Map<string, Readonly<BookingRecord>> {
    return new Map(this.#records.all().filter(([, rec]) => !rec.settled));
  }

  /** Load the records and reconcile them with the server. Errors are logged and retried later. */
  async start(): Promise<void> {
    this.#started = true;
    await this.#enqueue(async () => {
      await this.#records.load(this.#o.log);
      if (this.#announcements.size > 0 || this.#records.size > 0) await this.#reconcileAll();
    });
  }

  /** Reconcile again (after a new event queue: events may have been missed). */
  resync(): void {
    if (this.#started) void this.#enqueue(() => this.#reconcileAll());
  }

  /** A `scheduled_messages` event of this bot, or a message to it from a system bot. */
  onEvent(event: ServerEvent): void {
    if (!this.#started) return;
    if (event.type === "message") {
      const content = event.message.content;
      // Behind the step that handles the failure its update event told of.
      if (FailureNotes.isNote(content))
        void this.#enqueue(async () => this.#notes.explain(content, this.#o.log));
      return;
    }
    if (event.type !== "scheduled_messages") return;
    if (event.op === "remove") {
      const messageId = event.scheduled_message_id;
      void this.#enqueue(async (about) => {
        const found = this.#ownerOf(messageId);
        if (!found) return; // not ours, or a booking we replaced ourselves
        const [a, rec] = found;
        about.id = a.id;
        await this.#booker.settle(a, rec);
        failpoint("booking-settled");
        const after = Math.max(this.#o.clock.now(), Date.parse(rec.occurrence));
        await this.#booker.bookNext(a, await this.#server.target(a.id, a.spec), after);
        this.#armCheck();
      });
    } else if (event.op === "update" && event.scheduled_message.failed) {
      const sm = event.scheduled_message;
      void this.#enqueue(async (about) => {
        const found = this.#ownerOf(sm.scheduled_message_id);
        if (found) {
          const [a, rec] = found;
          about.id = a.id;
          await this.#booker.handleFailed(a, rec, sm, await this.#server.target(a.id, a.spec));
        }
        this.#armCheck();
      });
    }
  }

  /** Resolves once the steps queued so far have run (the testing kit's clock waits for them). */
  idle(): Promise<void> {
    return this.#enqueue(async () => {});
  }

  /** Stop the timers and wait for the step in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timers.stop();
    await this.#chain;
  }

  #enqueue(step: (about: { id?: string }) => Promise<void>): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      if (this.#stopped) return;
      const about: { id?: string } = {}; // the step's announcement once known: its failure names it
      try {
        await step(about);
      } catch (err) {
        if (this.#stopped) return; // given up by the stop (a content function's signal), not failed
        this.#o.stats.bookingErrors++;
        const { mistake, wait } = sayFailure(this.#o.log, this.#mistakes, err, about.id);
        this.#timers.retry(mistake, wait);
      }
    });
    return this.#chain;
  }

  async #reconcileAll(): Promise<void> {
    const list = await this.#server.list();
    const claimed = new Set<number>();
    for (const [id, rec] of this.#records.all()) {
      if (this.#announcements.has(id)) continue;
      // Declarations are the desired state: a booking of an announcement no longer declared goes.
      const sm = this.#server.find(rec, list, claimed);
      if (sm) await this.#server.drop(sm, claimed);
      await this.#records.forget(id);
      this.#o.log.info({ announcement: id }, "announcement no longer declared; its booking was cancelled");
    }
    let failures = 0;
    let mistakes = 0;
    let wait: number | undefined;
    // A few at once: content functions that each wait (a slow snippet, a hung call) hold the
    // start for about one handler_timeout, not one each. The client paces the calls to the
    // account's rate budget whatever their number.
    const waiting = [...this.#announcements.values()];
    const worker = async (): Promise<void> => {
      for (let a = waiting.shift(); a !== undefined; a = waiting.shift()) {
        if (this.#stopped || wait !== undefined) return;
        try {
          await this.#reconcileOne(a, list, claimed);
          this.#mistakes.cleared(a.id);
        } catch (err) {
          if (this.#stopped) return; // given up by the stop (a content function's signal), not failed
          failures++;
          this.#o.stats.bookingErrors++;
          const said = sayFailure(this.#o.log, this.#mistakes, err, a.id, true);
          if (said.mistake) mistakes++;
          // The others' calls would be refused too: booked with the retry.
          if (said.wait !== undefined) wait = said.wait;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(RECONCILE_AT_ONCE, waiting.length) }, worker));
    if (this.#stopped) return;
    if (mistakes === 0) this.#mistakes.clear();
    if (failures > 0) this.#timers.retry(mistakes === failures, wait);
    else this.#timers.succeeded();
    this.#armCheck();
  }

  async #reconcileOne(a: Announcement, list: ScheduledMessage[], claimed: Set<number>): Promise<void> {
    const target = await this.#server.target(a.id, a.spec);
    const now = this.#o.clock.now();
    let rec = this.#records.get(a.id);
    if (!rec) return this.#booker.bookNext(a, target, now, list, claimed);
    // A settled record's booking is gone already (sent, cancelled or dropped, and logged).
    const sm = rec.settled ? undefined : this.#server.find(rec, list, claimed);
    if (!sm) {
      // An intent whose POST did not land (or sent already), or an edited announcement: book the next.
      if (rec.scheduledMessageId === undefined || rec.specHash !== target.specHash) {
        return this.#booker.bookNext(a, target, now, list, claimed);
      }
      if (!rec.settled) await this.#booker.settle(a, rec);
      return this.#booker.bookNext(a, target, Math.max(now, Date.parse(rec.occurrence)), list, claimed);
    }
    claimed.add(sm.scheduled_message_id);
    if (rec.scheduledMessageId === undefined) {
      rec = { ...rec, scheduledMessageId: sm.scheduled_message_id };
      await this.#records.save(a.id, rec);
      this.#o.stats.adopted++;
      this.#o.log.info(
        { announcement: a.id, occurrence: rec.occurrence, scheduledMessageId: sm.scheduled_message_id },
        "found the booking made just before a crash; adopted it",
      );
    }
    if (rec.specHash !== target.specHash) {
      await this.#server.delete(sm.scheduled_message_id);
      failpoint("booking-replaced");
      this.#o.stats.replaced++;
      this.#o.log.info(
        { announcement: a.id, occurrence: rec.occurrence },
        "announcement changed; replacing its booking",
      );
      return this.#booker.bookNext(a, target, now, list, claimed);
    }
    if (sm.scheduled_delivery_timestamp !== rec.target.timestamp) {
      // Only this account moves its bookings: a reschedule (decideFailed's) that landed on the
      // server while its record was not written (its answer lost, the store down, a crash).
      rec = { ...rec, retried: true, target: { ...rec.target, timestamp: sm.scheduled_delivery_timestamp } };
      await this.#records.save(a.id, rec);
      this.#o.log.warn(
        {
          announcement: a.id,
          occurrence: rec.occurrence,
          at: new Date(rec.target.timestamp * 1000).toISOString(),
        },
        "the booking was moved on the server (a reschedule not recorded before a failure or crash); recorded its new time",
      );
    }
    if (sm.failed) {
      // Dropped (the next one booked), or moved to go out now and still to take the edits below.
      const moved = await this.#booker.handleFailed(a, rec, sm, target, list, claimed);
      if (!moved) return;
      rec = moved;
    }
    await applyEdits(this.#edits, a.id, a.spec, rec, sm);
  }

  #ownerOf(messageId: number): [Announcement, BookingRecord] | undefined {
    for (const [id, rec] of this.#records.all()) {
      const a = this.#announcements.get(id);
      if (a && !rec.settled && rec.scheduledMessageId === messageId) return [a, rec];
    }
    return undefined;
  }

  #armCheck(): void {
    this.#timers.checkAfter(this.#records.due());
  }
}
