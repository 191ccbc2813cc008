/**
 * A bot's `bot.cron()` jobs: run in this process on one JobTimer per bot, each handler with a
 * JobContext, through the pipeline's `runJob` (effect records, retries, dead letters). The time
 * of each run, and before the first one the time of the job's first start, is persisted (state
 * `<bot>/jobs/<job id>`) so the missed-run policy can tell, after downtime, which occurrences passed. While an occurrence is retried its job counts as running:
 * a firing meanwhile is skipped.
 *
 * The occurrence under way is persisted with its run until it is done with (handled, or kept as
 * a dead letter): one still there at a start was cut short by a crash (kill -9, a lost machine,
 * a lease lost mid-run) and runs again, its effects made before found in their records.
 */
import type { Logger } from "pino";
import { EFFECT_RECORDS_MARGIN_MS, EFFECT_RECORDS_MIN_TTL_MS } from "../effects/effect-records.ts";
import type { JobContext } from "../pipeline/context.ts";
import type { JobOccurrence, RunHandler, RunJob } from "../pipeline/incoming.ts";
import type { LetterTurns } from "../pipeline/replay-turns.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { CronOptions } from "./declarations.ts";
import type { SchedulerStats } from "./scheduler-stats.ts";
import { type JobRun, JobTimer } from "./timing/job-timer.ts";
import { compileSchedule } from "./timing/occurrences.ts";

/** A `bot.cron()` declaration, as the bot handle records it. */
export interface CronDeclaration {
  expression: string;
  options: CronOptions;
  handler: (ctx: JobContext<never>) => unknown;
}

export interface LocalJobsOptions {
  /** The bot's `jobs` namespace. */
  store: StateStore;
  flush(): Promise<void>;
  log: Logger;
  clock: Clock;
  stats: SchedulerStats;
  /** The bot's pipeline's run stage: builds the job's context and runs its handler. */
  runHandler: RunHandler;
  /** The pipeline's effects and failure stages for a job's occurrence. */
  runJob: RunJob;
  /** Aborted when the bot stops. */
  signal: AbortSignal;
  /**
   * The bot's store health: told when a record of a job's run lands (its outage, if any, is over:
   * for a bot that handles no message, the only write that says so), and when one fails.
   */
  storeHealth?: JobStoreHealth;
}

/** What a bot's cron jobs tell its store health (src/pipeline/store-health.ts) of their records. */
export interface JobStoreHealth {
  landed(): void;
  /** Records the store's outage, if `err` is one (the bot is then not ready until a write lands). */
  failed(err: unknown): boolean;
}

/**
 * The id a cron job's last run is stored under: `options.id`, else its expression and time zone
 * (`"0 9 * * 1 Europe/Berlin"`), with `#2`, `#3`… for repeats of the same schedule.
 */
export function cronJobIds(jobs: readonly Pick<CronDeclaration, "expression" | "options">[]): string[] {
  const seen = new Map<string, number>();
  return jobs.map(({ expression, options }) => {
    const base = options.id ?? `${expression} ${options.timezone ?? "UTC"}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base} #${n}`;
  });
}

/**
 * For each job given an `options.id`, the key its history had without one (its expression and
 * time zone), read when the id has none yet: setting an id on a deployed job keeps its history.
 * Undefined for a job without an id, and for a key another of the bot's jobs is stored under.
 */
function formerIds(jobs: readonly Pick<CronDeclaration, "expression" | "options">[], ids: string[]) {
  const unnamed = cronJobIds(
    jobs.map(({ expression, options: { id: _, ...options } }) => ({ expression, options })),
  );
  return jobs.map(({ options }, i) =>
    options.id !== undefined && !ids.includes(unnamed[i]!) ? unnamed[i] : undefined,
  );
}

/** A cron job's dead letter whose job is no longer declared: kept (false), with a warning. */
export function jobGone(log: Logger, letter: DeadLetter): false {
  const { job } = letter.event as unknown as JobOccurrence;
  log.warn(
    { deadLetter: letter.id, job },
    "the bot no longer declares this cron job: its dead letter is kept",
  );
  return false;
}

export class LocalJobs {
  readonly #o: LocalJobsOptions;
  /** Stopped (and listed) by the BotScheduler directly. */
  readonly timer: JobTimer;
  readonly #jobs: { id: string; former: string | undefined; declaration: CronDeclaration }[];
  /** The name a run cut short is taken up under, when not its job's id (begun under its former key). */
  readonly #resumedAs = new Map<string, string>();
  /** Set once the bot's stop left the runs still going ({@link leave}). */
  readonly #stop = { left: false };

  /** Throws `SCHEDULE_INVALID` for a bad cron expression, time zone or missed-run policy. */
  constructor(options: LocalJobsOptions, declarations: readonly CronDeclaration[]) {
    this.#o = options;
    const ids = cronJobIds(declarations);
    const formers = formerIds(declarations, ids);
    this.#jobs = declarations.map((declaration, i) => ({ id: ids[i]!, former: formers[i], declaration }));
    this.timer = new JobTimer({
      clock: options.clock,
      onRun: () => {
        options.stats.jobRuns++;
      },
      onError: (err, run) => {
        options.stats.jobErrors++;
        options.log.error(
          { err, job: run.jobId, scheduledFor: run.scheduledFor.toISOString() },
          "cron job failed",
        );
      },
      onSkip: (skip) => {
        options.stats.jobsSkipped++;
        options.log.info(
          { job: skip.jobId, scheduledFor: skip.scheduledFor.toISOString(), reason: skip.reason },
          skip.reason === "missed"
            ? "cron job missed while down; skipped"
            : "cron job still running; skipped",
        );
      },
    });
  }

  /**
   * Load each job's last run (or, never run, since when it is declared: recorded at its first
   * start), plan the next (applying the missed-run policy) and start the timer.
   */
  async start(): Promise<void> {
    const firstStarts: string[] = [];
    const cutShort: Array<[string, UnderWay]> = [];
    for (const { id, former, declaration } of this.#jobs) {
      let stored = (await this.#o.store.get(id)) as StoredJob | undefined;
      if (stored === undefined && former !== undefined) {
        stored = (await this.#o.store.get(former)) as StoredJob | undefined;
        // Kept under the id from now on; a run cut short goes on under the name it began with.
        if (stored?.running) stored = { ...stored, running: { ...stored.running, job: former } };
        if (stored !== undefined) await this.#record([id], stored);
      }
      const lastRunAt = storedDate(stored?.lastRunAt);
      const declaredAt = storedDate(stored?.declaredAt);
      if (!lastRunAt && !declaredAt) firstStarts.push(id);
      const underWay = underWayOf(stored?.running);
      if (underWay) cutShort.push([id, underWay]);
      const { expression, options } = declaration;
      this.timer.add(
        {
          id,
          cron: expression,
          timezone: options.timezone ?? "UTC",
          missed: options.missed ?? "skip",
          ...(lastRunAt ? { lastRunAt } : {}),
          ...(declaredAt ? { declaredAt } : {}),
        },
        (run) => this.#run(id, declaration, run),
      );
    }
    // A first start ever has nothing to catch up, but the next start does, if an occurrence passes
    // meanwhile without a run (the process went down, or its instance lost the bot).
    if (firstStarts.length > 0)
      await this.#record(firstStarts, { declaredAt: new Date(this.#o.clock.now()).toISOString() });
    this.timer.start();
    for (const [id, underWay] of cutShort) {
      const scheduledFor = underWay.scheduledFor.toISOString();
      const { job, ...occurrence } = underWay;
      if (job !== undefined) this.#resumedAs.set(id, job);
      if (this.timer.resume(id, occurrence)) {
        this.#o.log.warn(
          { job: id, scheduledFor },
          "a cron job's run was cut short before it finished: it runs again (its effects made before are not made again)",
        );
      } else {
        this.#o.log.warn(
          { job: id, scheduledFor },
          "a cron job's run was cut short before it finished, and a later occurrence has passed since: the job's missed-run policy applies to that one",
        );
        this.#resumedAs.delete(id);
        void this.#record([id], { lastRunAt: underWay.firedAt.toISOString() });
      }
    }
  }

  async #run(id: string, declaration: CronDeclaration, run: JobRun): Promise<void> {
    const name = (run.resumed && this.#resumedAs.get(id)) || id;
    this.#resumedAs.delete(id);
    const occurrence: JobOccurrence = {
      type: "cron_job",
      job: name,
      scheduledFor: run.scheduledFor.toISOString(),
      firedAt: run.firedAt.toISOString(),
      catchUp: run.catchUp,
    };
    const { scheduledFor, firedAt, catchUp } = occurrence;
    // The run-once policy's decision, said as the skip policy's is (a run taken up again was said).
    if (catchUp && run.resumed !== true)
      this.#o.log.info({ job: id, scheduledFor }, "cron job missed while down; running it once now");
    // Kept until the occurrence is done with: a crash in between leaves it for the next start.
    // Each write is issued at once (not awaited): a store applies writes in the order issued, and
    // the handler's effects wait until the mark is durable (`marked`).
    const running = { scheduledFor, firedAt, catchUp, ...(name !== id ? { job: name } : {}) };
    const marked = this.#record([id], { lastRunAt: firedAt, running });
    const signal = AbortSignal.any([run.signal, this.#o.signal]);
    const resumed = run.resumed === true;
    const handled = await this.#attempt(declaration, occurrence, signal, undefined, resumed, marked);
    // Left by the stop: the occurrence stays marked under way, and runs again at the next start.
    if (this.#stop.left) return;
    if (!handled) this.#o.stats.jobErrors++;
    void this.#record([id], { lastRunAt: firedAt }, true);
  }

  /**
   * Run a cron job's dead letter again. False, and the letter kept, when it fails again or the
   * bot no longer declares its job. `turns`: its attempts' among the bot's replays.
   */
  async replay(letter: DeadLetter, turns?: LetterTurns): Promise<boolean> {
    const occurrence = letter.event as unknown as JobOccurrence;
    const job = this.#jobs.find((j) => j.id === occurrence.job || j.former === occurrence.job);
    if (!job) return jobGone(this.#o.log, letter);
    return this.#attempt(job.declaration, occurrence, this.#o.signal, letter, false, undefined, turns);
  }

  #attempt(
    declaration: CronDeclaration,
    occurrence: JobOccurrence,
    signal: AbortSignal,
    letter?: DeadLetter,
    resumed = false,
    marked?: Promise<void>,
    turns?: LetterTurns,
  ): Promise<boolean> {
    const bindings = { job: occurrence.job, scheduledFor: occurrence.scheduledFor };
    const job: JobContext<never>["job"] = {
      id: occurrence.job,
      expression: declaration.expression,
      scheduledFor: new Date(occurrence.scheduledFor),
      firedAt: new Date(occurrence.firedAt),
      catchUp: occurrence.catchUp,
    };
    const keptMs = recordsKeptMs(declaration, job.firedAt);
    return this.#o.runJob(
      occurrence,
      async (s, effects, once) =>
        this.#o.runHandler(
          s,
          "job",
          bindings,
          // Assigned, not spread: the base context's helpers are getters on its prototype.
          (base): JobContext<never> => Object.assign(base as Omit<JobContext<never>, "job">, { job }),
          declaration.handler,
          effects,
          { once, keptMs },
          // A letter's replay: its calls wait in the budget's background lane.
          letter !== undefined,
        ),
      signal,
      letter,
      resumed,
      marked,
      keptMs,
      turns,
      this.#stop,
    );
  }

  /**
   * The bot's stop leaves the runs still going (past its deadline and grace): nothing they do from
   * now on is recorded, and the occurrences they run, marked under way, run again at the next start.
   */
  leave(): void {
    this.#stop.left = true;
  }

  /**
   * Never rejects: a failure is logged. The first key's write is issued before this returns.
   * `done`: the record of an occurrence done with, which tells the bot's store health that its
   * writes land again (not the mark at a run's start, made before its handler's writes are tried).
   */
  async #record(ids: string[], value: StoredJob, done = false): Promise<void> {
    try {
      for (const id of ids) await this.#o.store.set(id, value);
      await this.#o.flush();
      if (done) this.#o.storeHealth?.landed();
    } catch (err) {
      this.#o.storeHealth?.failed(err);
      this.#o.log.error(
        { err, jobs: ids },
        "could not record a cron job's run or first start in the state store",
      );
    }
  }
}

/**
 * What `<bot>/jobs/<job id>` holds: the time of the last run (or, before the first, of the job's
 * first start), and the occurrence under way, until it is done with.
 */
type StoredJob = {
  lastRunAt?: string;
  declaredAt?: string;
  /** `job`: the name the occurrence runs under, when not the job's id (its former key). */
  running?: { scheduledFor: string; firedAt: string; catchUp: boolean; job?: string };
};

type UnderWay = Pick<JobRun, "scheduledFor" | "firedAt" | "catchUp"> & { job?: string };

/** The occurrence a stored job was running, or `undefined` when none (or not readable). */
function underWayOf(value: unknown): UnderWay | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { scheduledFor, firedAt, catchUp, job } = value as Record<string, unknown>;
  const at = storedDate(scheduledFor);
  const fired = storedDate(firedAt);
  if (!at || !fired) return undefined;
  return {
    scheduledFor: at,
    firedAt: fired,
    catchUp: catchUp === true,
    ...(typeof job === "string" ? { job } : {}),
  };
}

/**
 * How long the effect records (and applied marker) of an occurrence fired at `firedAt` are kept:
 * cut short by a crash, it runs again at any start before the job's next occurrence (JobTimer's
 * `resume`), however long the bot was down, so they outlive that; at least the bot's floor.
 */
function recordsKeptMs(declaration: CronDeclaration, firedAt: Date): number {
  const schedule = compileSchedule({
    cron: declaration.expression,
    timezone: declaration.options.timezone ?? "UTC",
  });
  const next = schedule.next(firedAt)?.getTime() ?? firedAt.getTime();
  return Math.max(EFFECT_RECORDS_MIN_TTL_MS, next - firedAt.getTime() + EFFECT_RECORDS_MARGIN_MS);
}

/** A date the store holds as an ISO string, or `undefined` when absent or not a date. */
function storedDate(value: unknown): Date | undefined {
  const date = typeof value === "string" ? new Date(value) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : undefined;
}
