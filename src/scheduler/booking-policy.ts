/**
 * The policies of recurring bookings: what to do with a booking the server marked failed, and
 * when to reconcile again.
 */

import type { Logger } from "pino";
import { isRateLimitError } from "../api/errors.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";

/**
 * What to do with a booking the server marked failed (see
 * docs/internals/server-behaviour.md#scheduled-messages: it gives up on a message more than 10
 * minutes late, or one it may no longer send). The first failure of an occurrence at most 30
 * minutes after its time is moved to one minute from now (the server needs a new time to revive
 * it), so it goes out late rather than never. A second failure, or an older occurrence: drop the
 * booking and book the next occurrence.
 */
export function decideFailed(input: {
  occurrenceMs: number;
  retried: boolean;
  nowMs: number;
}): { action: "reschedule"; atMs: number } | { action: "drop"; reason: "failed-again" | "too-late" } {
  if (input.retried) return { action: "drop", reason: "failed-again" };
  if (input.nowMs - input.occurrenceMs > 30 * 60_000) {
    return { action: "drop", reason: "too-late" };
  }
  return { action: "reschedule", atMs: input.nowMs + 60_000 };
}

/** What the log says of a booking dropped for each reason of {@link decideFailed}. */
export const DROPPED = {
  "failed-again":
    "the announcement failed again after a reschedule; dropped it and booking the next occurrence",
  "too-late": "the announcement failed and is too late to send; dropped it and booking the next occurrence",
} as const;

const RETRY_MIN_MS = 60_000;
const RETRY_MAX_MS = 30 * 60_000;
/** By then the server has sent a booking or marked it failed (it gives up at 10 minutes late). */
export const CHECK_AFTER_MS = 12 * 60_000;
/**
 * By then the server has sent a booking on time (it sends at whole-minute checks): the first check
 * of a bot that gets no `scheduled_messages` events (webhook mode), which learns of each delivery
 * only by looking, so that the next occurrence is booked before it is due.
 */
export const CHECK_SOON_MS = 2 * 60_000;

/**
 * A retry with exponential backoff after a failed step, and a safety-net check a while after the
 * earliest booking is due (in case its `remove` or `update` event never arrives).
 */
export class ReconcileTimers {
  readonly #clock: Clock;
  readonly #fire: () => void;
  #retry: TimerHandle | undefined;
  #retryDelay = RETRY_MIN_MS;
  #check: TimerHandle | undefined;
  #stopped = false;
  /** How long after a booking's time its checks come, the first first. */
  readonly #checks: readonly number[];

  /**
   * `fire` runs when either timer goes off (it should reconcile everything). `blind`: no event
   * says when a booking is sent (webhook mode): each is also checked {@link CHECK_SOON_MS} after.
   */
  constructor(clock: Clock, fire: () => void, blind = false) {
    this.#clock = clock;
    this.#fire = fire;
    this.#checks = blind ? [CHECK_SOON_MS, CHECK_AFTER_MS] : [CHECK_AFTER_MS];
  }

  /**
   * Something failed: fire after 1 minute, then 2, 4… up to 30 (one pending retry at a time).
   * `slow`: only the config's mistakes failed (booking-mistakes.ts), which no early retry mends:
   * fire after 30 minutes. `atLeastMs`: not before then (the server's wait of a rate limit).
   */
  retry(slow = false, atLeastMs = 0): void {
    if (this.#stopped || this.#retry) return;
    const delay = Math.max(slow ? RETRY_MAX_MS : this.#retryDelay, atLeastMs);
    this.#retryDelay = Math.min(delay * 2, RETRY_MAX_MS);
    this.#retry = this.#clock.setTimeout(() => {
      this.#retry = undefined;
      this.#fire();
    }, delay);
  }

  /** Everything succeeded: the next failure starts the backoff from 1 minute again. */
  succeeded(): void {
    this.#retryDelay = RETRY_MIN_MS;
  }

  /** Arm the earliest check still ahead of the bookings due at `dueAtMs`. */
  checkAfter(dueAtMs: Iterable<number>): void {
    if (this.#check) this.#clock.clearTimeout(this.#check);
    this.#check = undefined;
    if (this.#stopped) return;
    const now = this.#clock.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (const due of dueAtMs)
      for (const after of this.#checks) {
        const at = due + after;
        if (at > now && at < earliest) earliest = at;
      }
    if (earliest === Number.POSITIVE_INFINITY) return;
    this.#check = this.#clock.setTimeout(() => {
      this.#check = undefined;
      this.#fire();
    }, earliest - now);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#retry) this.#clock.clearTimeout(this.#retry);
    if (this.#check) this.#clock.clearTimeout(this.#check);
    this.#retry = this.#check = undefined;
  }
}

/** The line of a step the account's rate limit stopped. */
export const RATE_LIMITED =
  "the account's rate limit is spent: the announcements are booked once the server's wait is over";

/**
 * How a failed step is said; what the retry does: the account's rate limit spent (by this daemon,
 * or by another client of the same account) is one warn line without a stack, the retry not before
 * the server's wait (`wait`, ms), since nothing can be booked until then; a config mistake is said
 * once (`mistake`, booking-mistakes.ts); anything else is an error with its stack, its line naming
 * `announcement` when the step was one announcement's booking (`ownStep`).
 */
export function sayFailure(
  log: Logger,
  mistakes: { said(log: Logger, id: string | undefined, err: unknown): boolean },
  err: unknown,
  announcement: string | undefined,
  ownStep = false,
): { mistake: boolean; wait?: number } {
  if (isRateLimitError(err)) {
    const retryAfterSeconds = Math.ceil(err.retryAfterMs / 1000);
    log.warn({ announcement, code: err.code, retryAfterSeconds }, RATE_LIMITED);
    return { mistake: false, wait: err.retryAfterMs };
  }
  if (mistakes.said(log, announcement, err)) return { mistake: true };
  const line = ownStep
    ? `announcement "${announcement}" could not be booked; retrying`
    : "scheduler step failed; retrying";
  log.error({ err, announcement }, line);
  return { mistake: false };
}
