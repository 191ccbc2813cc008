/**
 * All local cron jobs of a process on ONE timer: a min-heap of next fire times and a single
 * `setTimeout` armed for the earliest (capped at 2^31-1 ms and re-armed), so 10,000 jobs cost
 * one timer and O(log n) per fire.
 */
import { type Clock, MAX_TIMER_DELAY_MS, realClock, type TimerHandle } from "../../time/clock.ts";
import { type CompiledSchedule, compileSchedule, ScheduleError } from "./occurrences.ts";

/** What to do about occurrences that passed while the process was down (or the timer was late). */
export type MissedRunPolicy = "skip" | "run-once";

/** One recurring job. `lastRunAt` is what the caller persisted from {@link JobTimerOptions.onRun}. */
export interface CronJob {
  id: string;
  cron: string;
  timezone: string;
  /** Default `"skip"`. */
  missed?: MissedRunPolicy;
  lastRunAt?: Date;
  /**
   * Since when the job is declared (its first start), for a job that never ran: occurrences after
   * it that passed count as missed. Without it (and without `lastRunAt`) nothing is missed.
   */
  declaredAt?: Date;
}

/** What a handler gets: which occurrence this is and when it really fired (lateness = difference). */
export interface JobRun {
  jobId: string;
  scheduledFor: Date;
  firedAt: Date;
  /** True for the single catch-up run of a "run-once" job after missed occurrences. */
  catchUp: boolean;
  /** True for an occurrence run again by {@link JobTimer.resume}: its handler began before and may have acted. */
  resumed?: true;
  /** Aborted when the timer is stopped; long handlers should wind down. */
  signal: AbortSignal;
}

export type JobHandler = (run: JobRun) => unknown;

/** An occurrence that did not run: its handler was still busy, or it passed while down ("skip"). */
export interface SkippedRun {
  jobId: string;
  scheduledFor: Date;
  reason: "still-running" | "missed";
}

export interface JobTimerOptions {
  clock?: Clock;
  /** Called as each run starts (a resumed one included). */
  onRun?: (jobId: string, firedAt: Date) => void;
  /** A handler threw or rejected. The timer keeps going. */
  onError: (error: unknown, run: Omit<JobRun, "signal">) => void;
  onSkip?: (skip: SkippedRun) => void;
}

/** Introspection row from {@link JobTimer.jobs}: the job, its next planned run, whether it runs now. */
export type JobInfo = JobState["job"] & { nextRunAt: Date | undefined; running: boolean };

interface JobState {
  job: Required<Omit<CronJob, "lastRunAt" | "declaredAt">> & { lastRunAt: Date | undefined };
  /** Missed occurrences count from here when the job has no `lastRunAt`. */
  declaredAt: Date | undefined;
  schedule: CompiledSchedule;
  handler: JobHandler;
  entry: Entry | undefined;
  running: Promise<void> | undefined;
}

interface Entry {
  at: number;
  seq: number;
  scheduledFor: number;
  catchUp: boolean;
  state: JobState;
}

/** Runs cron jobs on one timer, with a missed-run policy, no self-overlap and a graceful stop. */
export class JobTimer {
  readonly #clock: Clock;
  readonly #options: JobTimerOptions;
  readonly #jobs = new Map<string, JobState>();
  /**
   * Compiled schedules by cron + time zone, shared by the jobs using the same one (each costs
   * kilobytes); safe because each call answers for its own instant, whatever the calls before.
   */
  readonly #schedules = new Map<string, CompiledSchedule>();
  readonly #heap = new MinHeap<Entry>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
  readonly #running = new Set<Promise<void>>();
  #seq = 0;
  #handle: TimerHandle | undefined;
  #started = false;
  #abort = new AbortController();

  constructor(options: JobTimerOptions) {
    this.#clock = options.clock ?? realClock;
    this.#options = options;
  }

  /**
   * Adds a job, planned at `start()`; throws {@link ScheduleError} for a bad schedule or an id
   * already in use. (`bot.cron()` checks the id and the missed-run policy when it is declared.)
   */
  add(job: CronJob, handler: JobHandler): void {
    if (this.#jobs.has(job.id)) {
      throw new ScheduleError(
        "id",
        job.id,
        `job id "${job.id}" is already in use; give each job its own id.`,
      );
    }
    const scheduleKey = `${job.cron}\u0000${job.timezone}`;
    const schedule =
      this.#schedules.get(scheduleKey) ?? compileSchedule(job, `jobs[${JSON.stringify(job.id)}]`);
    this.#schedules.set(scheduleKey, schedule);
    const state: JobState = {
      job: {
        id: job.id,
        cron: job.cron,
        timezone: job.timezone,
        missed: job.missed ?? "skip",
        lastRunAt: job.lastRunAt,
      },
      declaredAt: job.declaredAt,
      schedule,
      handler,
      entry: undefined,
      running: undefined,
    };
    this.#jobs.set(job.id, state);
  }

  /** Plans every job (applying the missed-run policy since its `lastRunAt`) and arms the timer. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#abort = new AbortController();
    for (const state of this.#jobs.values()) this.#plan(state);
    this.#arm();
  }

  /**
   * Stops firing, aborts running handlers' `signal`, and waits up to `timeoutMs` (default 10 s)
   * for them. Resolves with the ids of jobs still running at the deadline.
   */
  async stop(timeoutMs = 10_000): Promise<{ unfinished: string[] }> {
    this.#started = false;
    if (this.#handle !== undefined) this.#clock.clearTimeout(this.#handle);
    this.#handle = undefined;
    this.#heap.clear();
    for (const state of this.#jobs.values()) state.entry = undefined;
    this.#abort.abort(new Error("The job timer is stopping."));
    if (this.#running.size > 0) {
      let deadline: TimerHandle | undefined;
      const timedOut = new Promise<void>((resolve) => {
        deadline = this.#clock.setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.allSettled([...this.#running]), timedOut]);
      if (deadline !== undefined) this.#clock.clearTimeout(deadline);
    }
    return { unfinished: [...this.#jobs.values()].filter((s) => s.running).map((s) => s.job.id) };
  }

  /** Resolves once the runs under way now have ended (the testing kit's clock waits for them). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#running]);
  }

  /** Every job with its next planned run (undefined before `start()` or after `stop()`). */
  jobs(): JobInfo[] {
    return [...this.#jobs.values()].map(({ job, entry, running }) => ({
      ...job,
      nextRunAt: entry ? new Date(entry.at) : undefined,
      running: running !== undefined,
    }));
  }

  /**
   * Run again, now, an occurrence whose handler began and did not finish (the process stopped
   * under it): the job counts as running meanwhile, so a firing during it is skipped. False, and
   * nothing run, when a later occurrence has passed since it fired (the missed-run policy, which
   * `start()` applied, covers that one), or the job is unknown, running, or the timer not started.
   */
  resume(jobId: string, occurrence: Pick<JobRun, "scheduledFor" | "firedAt" | "catchUp">): boolean {
    const state = this.#jobs.get(jobId);
    if (!this.#started || state === undefined || state.running !== undefined) return false;
    const following = state.schedule.next(occurrence.firedAt);
    if (following !== undefined && following.getTime() <= this.#clock.now()) return false;
    this.#report(() => this.#options.onRun?.(jobId, occurrence.firedAt));
    this.#launch(state, { jobId, ...occurrence, resumed: true, signal: this.#abort.signal });
    return true;
  }

  /** Queues the job's next fire: a catch-up now if occurrences were missed, else the next one. */
  #plan(state: JobState): void {
    const now = this.#clock.now();
    const { lastRunAt, missed } = state.job;
    const since = lastRunAt ?? state.declaredAt;
    const due = since ? state.schedule.next(since) : undefined;
    if (due !== undefined && due.getTime() <= now) {
      const latest = state.schedule.latestUpTo(new Date(now)) ?? due;
      if (missed === "run-once") {
        this.#queue(state, now, latest.getTime(), true);
        return;
      }
      this.#skipped(state, latest, "missed");
    }
    this.#queueNext(state, now);
  }

  #queueNext(state: JobState, after: number): void {
    this.#queueAt(state, state.schedule.next(new Date(after)));
  }

  #queueAt(state: JobState, next: Date | undefined): void {
    if (next === undefined) state.entry = undefined;
    else this.#queue(state, next.getTime(), next.getTime(), false);
  }

  #queue(state: JobState, at: number, scheduledFor: number, catchUp: boolean): void {
    const entry: Entry = { at, seq: this.#seq++, scheduledFor, catchUp, state };
    state.entry = entry;
    this.#heap.push(entry);
  }

  #arm(): void {
    if (!this.#started) return;
    if (this.#handle !== undefined) this.#clock.clearTimeout(this.#handle);
    this.#handle = undefined;
    const top = this.#heap.peek();
    if (top === undefined) return;
    const delay = Math.min(Math.max(0, top.at - this.#clock.now()), MAX_TIMER_DELAY_MS);
    this.#handle = this.#clock.setTimeout(() => this.#onTimer(), delay);
  }

  #onTimer(): void {
    this.#handle = undefined;
    const now = this.#clock.now();
    // Jobs due within the last second cannot have missed a whole period (cron's smallest is one
    // second): fire all of them first and work out their next occurrence afterwards, so the last
    // of many jobs due at once does not wait for the others' next occurrences.
    const firedOnTime: Entry[] = [];
    for (let top = this.#heap.peek(); top !== undefined && top.at <= now; top = this.#heap.peek()) {
      this.#heap.pop();
      const state = top.state;
      if (state.entry !== top) continue; // stale: a handler restarted the timer meanwhile
      if (!top.catchUp && now - top.scheduledFor < 1000) {
        this.#fire(state, top.scheduledFor, false, now);
        firedOnTime.push(top);
        continue;
      }
      const following = state.schedule.next(new Date(top.scheduledFor));
      if (following !== undefined && following.getTime() <= now) {
        // The timer was late by more than one period (a suspended machine, a blocked event loop):
        // treat it like downtime and apply the job's missed-run policy.
        const latest = state.schedule.latestUpTo(new Date(now)) ?? following;
        if (state.job.missed === "run-once") this.#fire(state, latest.getTime(), true, now);
        else this.#skipped(state, latest, "missed");
        this.#queueNext(state, now);
      } else {
        this.#fire(state, top.scheduledFor, top.catchUp, now);
        this.#queueAt(state, following);
      }
    }
    for (const top of firedOnTime) {
      // Unless a handler stopped (or restarted) the timer meanwhile.
      if (top.state.entry === top) this.#queueNext(top.state, top.scheduledFor);
    }
    this.#arm();
  }

  #skipped(state: JobState, scheduledFor: Date, reason: SkippedRun["reason"]): void {
    this.#report(() => this.#options.onSkip?.({ jobId: state.job.id, scheduledFor, reason }));
  }

  #fire(state: JobState, scheduledFor: number, catchUp: boolean, now: number): void {
    const jobId = state.job.id;
    if (state.running !== undefined) {
      this.#skipped(state, new Date(scheduledFor), "still-running");
      return;
    }
    const firedAt = new Date(now);
    state.job.lastRunAt = firedAt;
    this.#report(() => this.#options.onRun?.(jobId, firedAt));
    const signal = this.#abort.signal;
    this.#launch(state, { jobId, scheduledFor: new Date(scheduledFor), firedAt, catchUp, signal });
  }

  #launch(state: JobState, run: JobRun): void {
    const promise = (async () => {
      try {
        await state.handler(run);
      } catch (error) {
        const { signal: _signal, ...context } = run;
        this.#report(() => this.#options.onError(error, context));
      }
    })();
    state.running = promise;
    this.#running.add(promise);
    void promise.finally(() => {
      this.#running.delete(promise);
      if (state.running === promise) state.running = undefined;
    });
  }

  /** Calls a user callback; one that throws must not break the timer (and has nowhere to report). */
  #report(call: () => void): void {
    try {
      call();
    } catch {}
  }
}

/** A binary min-heap: O(log n) push and pop, O(1) peek. */
class MinHeap<T> {
  readonly #items: T[] = [];
  readonly #less: (a: T, b: T) => boolean;

  constructor(less: (a: T, b: T) => boolean) {
    this.#less = less;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.#siftDown(0);
    }
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }

  #siftDown(start: number): void {
    const items = this.#items;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < items.length && this.#less(items[left]!, items[smallest]!)) smallest = left;
      if (right < items.length && this.#less(items[right]!, items[smallest]!)) smallest = right;
      if (smallest === i) return;
      [items[i], items[smallest]] = [items[smallest]!, items[i]!];
      i = smallest;
    }
  }
}
