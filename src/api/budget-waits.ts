import type { CallLane } from "./budget-line.ts";
import type { BudgetSlot } from "./rate-budget.ts";

/**
 * A call's waits for the account's rate budget (its bucket's pacing, or a 429's `retry-after`),
 * told to whoever bounds the work the call is made for, found by the call's abort signal: a
 * handler's timeout does not count them, as the handler is not stuck but the account at its
 * limit (a catch-up after an outage, a burst of replies).
 */
export interface BudgetWaits {
  /** A call made with the watched signal began waiting for the budget. */
  began(): void;
  /** That wait is over (however it ended). */
  ended(): void;
}

const bySignal = new WeakMap<AbortSignal, BudgetWaits>();

/** Tell `waits` of every budget wait of the calls made with `signal`. */
export function watchBudgetWaits(signal: AbortSignal, waits: BudgetWaits): void {
  bySignal.set(signal, waits);
}

/**
 * Tell the watcher of `signal` (if any) that a call's wait for the budget begins; the function
 * returned ends it. The budget tells it before the call joins its waiting line, so that the wait a
 * watcher estimates then (`RateBucket.nextStartAt`, for a call asking now) is the call's own.
 */
export function budgetWaitBegins(signal: AbortSignal | undefined): (() => void) | undefined {
  const waits = signal === undefined ? undefined : bySignal.get(signal);
  if (waits === undefined) return undefined;
  waits.began();
  return () => waits.ended();
}

/** `wait`, told to the watcher of `signal` (if any) while it lasts. */
export async function budgetWait<T>(wait: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  const waits = signal === undefined ? undefined : bySignal.get(signal);
  if (waits === undefined) return wait;
  waits.began();
  try {
    return await wait;
  } finally {
    waits.ended();
  }
}

/**
 * `bucket.take(signal, lane)`, its wait told to the watcher of `signal` (if any) from before the
 * call joins the bucket's line until its turn comes or it leaves.
 */
export function takeTold(
  bucket: { take(signal?: AbortSignal, lane?: CallLane, waits?: () => void): Promise<void> | undefined },
  signal: AbortSignal | undefined,
  lane: CallLane | undefined,
): Promise<void> | undefined {
  let ends: (() => void) | undefined;
  try {
    const wait = bucket.take(signal, lane, () => {
      ends = budgetWaitBegins(signal);
    });
    return ends === undefined || wait === undefined ? wait : wait.finally(ends);
  } catch (err) {
    ends?.();
    throw err;
  }
}

/**
 * `bucket.reserve(signal)`, its wait told to the watcher of `signal` (if any) as {@link takeTold}
 * tells it: not at all when the slot is free at once.
 */
export async function reserveTold(
  bucket: { reserve(signal?: AbortSignal, lane?: CallLane, waits?: () => void): Promise<BudgetSlot> },
  signal: AbortSignal | undefined,
): Promise<BudgetSlot> {
  let ends: (() => void) | undefined;
  try {
    return await bucket.reserve(signal, undefined, () => {
      ends = budgetWaitBegins(signal);
    });
  } finally {
    ends?.();
  }
}
