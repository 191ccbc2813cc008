/**
 * Everything time-driven of one bot: its one-shot scheduled messages (`bot.schedule`), its
 * recurring announcements booked on the server (`bot.recurring`) and its local cron jobs
 * (`bot.cron`), with their counters in one place for metrics.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { RecipientLookups } from "../effects/schedule/resolve-recipient.ts";
import { createScheduleApi, type ScheduleApi } from "../effects/schedule/schedule-api.ts";
import type { ContextDeps } from "../pipeline/context.ts";
import type { RunHandler, RunJob } from "../pipeline/incoming.ts";
import { STOP_GRACE_MS } from "../pipeline/left-runs.ts";
import type { LetterTurns } from "../pipeline/replay-turns.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import type { StateStore } from "../state/state-store.ts";
import { type Clock, realClock, type TimerHandle } from "../time/clock.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { BookingRecord } from "./booking-server.ts";
import type { RecurringAnnouncement } from "./declarations.ts";
import { type CronDeclaration, type JobStoreHealth, jobGone, LocalJobs } from "./local-jobs.ts";
import { RecurringBookings } from "./recurring-bookings.ts";
import { newSchedulerStats, type SchedulerStats } from "./scheduler-stats.ts";
import type { JobInfo } from "./timing/job-timer.ts";

/** Notes kept until the start's reconciliation: as many as failures are remembered (failure-notes.ts). */
const MAX_EARLY = 64;

/** Logged (warn) by the stop once the grace passed with cron jobs still running. */
export const LEFT_JOBS_LINE =
  "cron jobs still running after the stop's grace are left: nothing they do from now on is recorded, and their occurrences run again at the next start";

export interface BotSchedulerOptions {
  client: Client;
  /** The bot's own namespace of the state store (`<bot>`); bookings and job runs live under it. */
  store: StateStore;
  /** Make state writes durable. */
  flush(): Promise<void>;
  log: Logger;
  /** Default: the real clock. Tests pass a ManualClock (and the same clock to the sandbox). */
  clock?: Clock;
  /** What the bot's contexts are built from (the server's empty-topic name is read from it). */
  contextDeps(): ContextDeps<unknown>;
  /**
   * The bot's caches' lookups (`ctx.schedule`'s): `bot.schedule` and the announcements resolve
   * names and emails with them, even before the bot registers. Default: the client's, ids kept.
   */
  lookups?: () => RecipientLookups;
  /** The bot's pipeline's run stage: where cron jobs' handlers run. */
  runHandler: RunHandler;
  /** The pipeline's retries, effect records and dead letters for a cron job's occurrence. */
  runJob: RunJob;
  /** Told whether a cron job's record of its run landed (an outage of the store over) or failed. */
  storeHealth?: JobStoreHealth;
  /**
   * The bot's `handler_timeout`: what an announcement's content function may take (its signal is
   * aborted then, and at the stop). Default: bounded by the stop alone.
   */
  handlerTimeoutMs?: number;
}

/** What `setup` declared: `bot.recurring()` by id and `bot.cron()` in order. */
export interface ScheduleDeclarations {
  recurring: ReadonlyMap<string, RecurringAnnouncement>;
  cronJobs: readonly CronDeclaration[];
}

/**
 * One bot's scheduler. The runtime creates it, starts it once the bot's queue is registered,
 * feeds it the bot's `scheduled_messages` events, and stops it with the bot.
 */
export class BotScheduler {
  #schedule: ScheduleApi | undefined;
  /** Counters for metrics. */
  readonly stats: SchedulerStats = newSchedulerStats();
  readonly #o: BotSchedulerOptions;
  readonly #clock: Clock;
  #stopping = new AbortController();
  // Known without reading the controller's signal, which is made on first read (most of a KB per
  // bot) and is needed only by cron jobs.
  #stopped = false;
  #recurring: RecurringBookings | undefined;
  #jobs: LocalJobs | undefined;
  #started = false;
  /**
   * Messages fed before the bookings were reconciled at a start (the Notification Bot's notes on
   * sends that failed while the bot was down, caught up with its new queue): handed over after
   * the reconciliation, which learns of those failures. Undefined once handed over.
   */
  #early: ServerEvent[] | undefined = [];

  constructor(options: BotSchedulerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  /**
   * One-shot scheduled messages, usable before `start()` (it is `bot.schedule`); made on first use.
   * Names and emails resolve as `ctx.schedule`'s do, through the bot's caches and kept ids.
   */
  get schedule(): ScheduleApi {
    if (this.#schedule === undefined) {
      const lookups = this.#o.lookups?.();
      this.#schedule = createScheduleApi({
        client: this.#o.client,
        clock: this.#clock,
        ...(lookups ? { lookups } : {}),
      });
    }
    return this.#schedule;
  }

  /**
   * Start the recurring bookings (reconciled with the server before this resolves; failures are
   * logged and retried, never thrown) and the cron jobs. Throws `SCHEDULE_INVALID` for a bad
   * cron expression or time zone in a declaration. `blind`: the bot gets no events (webhook mode),
   * so its bookings are looked at soon after their time (booking-policy.ts).
   */
  async start(declarations: ScheduleDeclarations, blind = false): Promise<void> {
    // Started again after stop() when a cluster instance gets the bot back.
    if (this.#stopped) {
      this.#stopped = false;
      this.#stopping = new AbortController();
    }
    const stopping = this.#stopping;
    this.#started = true;
    this.#early ??= [];
    this.#recurring = undefined;
    this.#jobs = undefined;
    const bookings = this.#o.store.namespace("bookings");
    // Nothing to book and nothing booked by an earlier run, no cron job: nothing to keep (a daemon
    // holds a scheduler per bot, and most schedule nothing).
    const followsBookings = declarations.recurring.size > 0 || (await bookings.list()).length > 0;
    if (this.#stopping !== stopping || this.#stopped) return; // stopped meanwhile
    if (!followsBookings && declarations.cronJobs.length === 0) {
      this.#early = undefined;
      return;
    }
    const log = this.#o.log.child({ component: "scheduler" });
    const common = { flush: this.#o.flush, log, clock: this.#clock, stats: this.stats };
    const lookups = this.#o.lookups?.();
    const recurring = followsBookings
      ? new RecurringBookings(
          {
            ...common,
            client: this.#o.client,
            store: bookings,
            blind,
            server: {
              emptyTopicName: () => this.#o.contextDeps().server?.emptyTopicName ?? "general chat",
              maxMessageLength: () => this.#o.contextDeps().server?.maxMessageLength,
              maxTopicLength: () => this.#o.contextDeps().server?.maxTopicLength,
              // Announcements name channels and people as ctx.schedule does, and resolve them alike.
              ...(lookups ? { lookups } : {}),
              ...(this.#o.handlerTimeoutMs === undefined
                ? {}
                : { contentTimeoutMs: this.#o.handlerTimeoutMs }),
              // A content function under way is given up at the stop (its signal aborted).
              stopping: stopping.signal,
            },
          },
          declarations.recurring,
        )
      : undefined;
    const jobs =
      declarations.cronJobs.length === 0
        ? undefined
        : new LocalJobs(
            {
              ...common,
              store: this.#o.store.namespace("jobs"),
              runHandler: this.#o.runHandler,
              runJob: this.#o.runJob,
              signal: stopping.signal,
              ...(this.#o.storeHealth ? { storeHealth: this.#o.storeHealth } : {}),
            },
            declarations.cronJobs,
          );
    this.#recurring = recurring;
    this.#jobs = jobs;
    await recurring?.start();
    const early = this.#early ?? [];
    this.#early = undefined;
    for (const event of early) recurring?.onEvent(event);
    if (this.#stopping !== stopping || this.#stopped) return; // stopped while the bookings were reconciled
    await jobs?.start();
  }

  /** Feed an event of the bot (only `scheduled_messages` ones matter). */
  onEvent(event: ServerEvent): void {
    // Before the start's reconciliation, a scheduled_messages event is read again in its list.
    if (this.#early === undefined) this.#recurring?.onEvent(event);
    else if (event.type === "message" && this.#early.length < MAX_EARLY) this.#early.push(event);
  }

  /** Resolves once the recurring announcements' steps queued so far have run. */
  idle(): Promise<void> {
    return this.#recurring?.idle() ?? Promise.resolve();
  }

  /** Resolves once the cron job runs under way now have ended. */
  jobsIdle(): Promise<void> {
    return this.#jobs?.timer.idle() ?? Promise.resolve();
  }

  /** Reconcile the bookings again (call after the bot got a new event queue). */
  resync(): void {
    this.#recurring?.resync();
  }

  /** The booked occurrence of each recurring announcement, by id. */
  get bookings(): Map<string, Readonly<BookingRecord>> {
    return this.#recurring?.bookings ?? new Map();
  }

  /**
   * Run a cron job's dead letter again (false, kept, when it fails or the job is gone); `turns`:
   * its attempts' among the bot's replays (pipeline/replay-turns.ts).
   */
  replayJob(letter: DeadLetter, turns?: LetterTurns): Promise<boolean> {
    if (this.#jobs === undefined) return Promise.resolve(this.#started && jobGone(this.#o.log, letter));
    return this.#jobs.replay(letter, turns);
  }

  /** The cron jobs with their next run. */
  jobs(): JobInfo[] {
    return this.#jobs?.timer.jobs() ?? [];
  }

  /** Stop the cron timer (running jobs get up to `deadlineMs`) and the booking work in progress. */
  async stop(deadlineMs: number): Promise<void> {
    this.#stopped = true;
    this.#early ??= [];
    this.#stopping.abort(new Error("bot stopping"));
    const [jobs] = await Promise.all([this.#jobs?.timer.stop(deadlineMs), this.#recurring?.stop()]);
    if (jobs && jobs.unfinished.length > 0) {
      this.#o.log.warn({ jobs: jobs.unfinished }, "cron jobs still running at the shutdown deadline");
      await this.#leaveJobs();
    }
  }

  /**
   * Past the stop's deadline, the job runs still going get the grace a message's run gets (real
   * time: the bot's clock may be held), what they keep as they end written before the store
   * closes; those still going then are left (local-jobs.ts).
   */
  async #leaveJobs(): Promise<void> {
    const jobs = this.#jobs;
    if (jobs === undefined) return;
    let timer: TimerHandle | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = realClock.setTimeout(resolve, STOP_GRACE_MS);
    });
    try {
      await Promise.race([jobs.timer.idle(), graceOver]);
    } finally {
      if (timer !== undefined) realClock.clearTimeout(timer);
    }
    const still = jobs.timer.jobs().filter((j) => j.running);
    if (still.length === 0) return;
    jobs.leave();
    this.#o.log.warn({ jobs: still.map((j) => j.id), graceMs: STOP_GRACE_MS }, LEFT_JOBS_LINE);
  }
}
