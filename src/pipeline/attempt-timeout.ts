/**
 * A later attempt's `handler_timeout` (handler-failures.ts), kept as the conversation queue keeps
 * a first attempt's (conversation-queue.ts): the time the attempt's calls wait for the account's
 * rate budget does not count, as the handler is not stuck but the account at its limit (a
 * catch-up after an outage, a burst of replies). Its deadline stands still while a call waits,
 * and moves on by the wait once none does.
 */
import { type BudgetWaits, watchBudgetWaits } from "../api/budget-waits.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";

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
