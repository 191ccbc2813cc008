/**
 * The `handler_timeout` of an attempt the failure stage runs (handler-failures.ts: a message's
 * later attempts; a cron job's every attempt), kept as the conversation queue keeps a message's
 * first attempt's (conversation-queue.ts), its warn line naming the run: the time the attempt's calls wait for the account's
 * rate budget does not count, as the handler is not stuck but the account at its limit (a
 * catch-up after an outage, a burst of replies). Its deadline stands still while a call waits,
 * and moves on by the wait once none does.
 */
import { type BudgetWaits, watchBudgetWaits } from "../api/budget-waits.ts";
import type { Logger } from "../api/logger.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";
import type { AnyEvent } from "../wire/events.ts";
import { runFields } from "./event-fields.ts";
import { handlerOf, type RunHolder } from "./handler-names.ts";
import type { JobOccurrence } from "./incoming.ts";
import { handlerTimedOut } from "./router-error.ts";

/** What names a run on its attempts' lines: its event (a message's, a cron job's occurrence), its conversation. */
export interface NamedRun {
  event: { type: string };
  conversation?: string | undefined;
}

export class AttemptTimeout implements BudgetWaits {
  readonly #controller = new AbortController();
  readonly #clock: Clock;
  readonly #reason: () => unknown;
  #timer: TimerHandle | undefined;
  /** When it is due, while no call waits. */
  #dueAt: number;
  /** Calls waiting for the budget now, and since when. */
  #waits = 0;
  #waitingSince = 0;
  #cleared = false;

  /** Aborts {@link signal} with `reason()` once the attempt ran `ms`, its budget waits left out. */
  constructor(clock: Clock, ms: number, reason: () => unknown) {
    this.#clock = clock;
    this.#reason = reason;
    this.#dueAt = clock.now() + ms;
    this.#arm();
  }

  /** Aborted at the timeout. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The waits of the calls made with `signal` (the attempt's, its timeout's in it) pause the timeout. */
  watch(signal: AbortSignal): AbortSignal {
    watchBudgetWaits(signal, this);
    return signal;
  }

  began(): void {
    if (this.#waits++ > 0) return;
    this.#waitingSince = this.#clock.now();
    this.#disarm();
  }

  ended(): void {
    if (this.#waits === 0 || --this.#waits > 0) return;
    this.#dueAt += this.#clock.now() - this.#waitingSince;
    this.#arm();
  }

  /** The attempt is over: the timeout goes. */
  clear(): void {
    this.#cleared = true;
    this.#disarm();
  }

  #arm(): void {
    if (this.#cleared || this.#controller.signal.aborted) return;
    const fire = () => {
      this.#timer = undefined;
      this.#controller.abort(this.#reason());
    };
    this.#timer = this.#clock.setTimeout(fire, Math.max(0, this.#dueAt - this.#clock.now()));
  }

  #disarm(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * What names a failed run on the lines of its attempts (their timeouts, their pauses), as the
 * first attempt's timeout line names it (the queue's): its conversation and event; a cron job's
 * occurrence, which has neither conversation nor event id, its job and time.
 */
export function namedRun(run: NamedRun): Record<string, unknown> {
  const { conversation, event } = run;
  const { job, scheduledFor } = event as JobOccurrence;
  return {
    ...(conversation === undefined ? {} : { conversation }),
    ...(event.type === "cron_job" ? { job, scheduledFor } : runFields(event as AnyEvent)),
  };
}

/**
 * `go`, attempt `attempt` of `run`, given a signal aborted by `stopping` or past the handler
 * timeout (its warn line said then). Its calls' waits for the account's rate budget do not count,
 * as on a queued first attempt (conversation-queue.ts). A cron job's first attempt is bounded so too.
 */
export async function withinAttemptTime(
  o: { clock: Clock; handlerTimeoutMs: number; log: Logger },
  run: NamedRun,
  attempt: number,
  stopping: AbortSignal,
  go: (signal: AbortSignal, holder: RunHolder) => unknown,
): Promise<void> {
  const holder: RunHolder = { running: undefined };
  const timedOut = () => {
    o.log.warn(
      { ...namedRun(run), ...handlerOf(holder.running), attempt, timeoutMs: o.handlerTimeoutMs },
      attempt > 1
        ? "handler timed out on a later attempt; its signal was aborted"
        : "handler timed out; its signal was aborted",
    );
    return handlerTimedOut(o.handlerTimeoutMs, run.conversation);
  };
  const timeout = new AttemptTimeout(o.clock, o.handlerTimeoutMs, timedOut);
  try {
    await go(timeout.watch(AbortSignal.any([stopping, timeout.signal])), holder);
  } finally {
    timeout.clear();
  }
}
