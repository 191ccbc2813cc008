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
