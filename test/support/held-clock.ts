/**
 * A clock for the daemon tests whose outcome hangs on a timer shorter than the real work around
 * it (a handler timeout of a second against a run held on a gate): time stands still between
 * the test's advances, so such a timer fires where the test moves the clock, never because the
 * machine was slow. A timer due now (a zero delay: a stop with no deadline, a retry at once)
 * fires on the next turn of the event loop, as a real one does.
 */
import type { Clock, TimerHandle } from "../../src/time/clock.ts";

interface Timer {
  dueAt: number;
  fn: () => void;
}

/** Let the async work a fired timer started reach its next wait (a few macrotask turns). */
async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class HeldClock implements Clock {
  #now: number;
  readonly #timers = new Set<Timer>();

  /** `start`: epoch ms, default the machine's time now. */
  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: Timer = { dueAt: this.#now + Math.max(0, ms), fn };
    this.#timers.add(timer);
    if (timer.dueAt <= this.#now) setImmediate(() => this.#fire(timer));
    return timer as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as unknown as Timer);
  }

  /** How long each pending timer has left (ms), in the order they were set. */
  pendingDelays(): number[] {
    return [...this.#timers].map((t) => t.dueAt - this.#now);
  }

  /**
   * Move time forward by `ms`: fire the timers that come due, in due order (ties in creation
   * order), letting the work each starts run before the next.
   */
  async advance(ms: number): Promise<void> {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`advance: ms must be 0 or more, not ${ms}`);
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#earliest();
      if (next === undefined || next.dueAt > target) break;
      this.#now = Math.max(this.#now, next.dueAt);
      this.#fire(next);
      await settle();
    }
    this.#now = target;
    await settle();
  }

  #fire(timer: Timer): void {
    if (this.#timers.delete(timer)) timer.fn();
  }

  #earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.#timers) if (best === undefined || t.dueAt < best.dueAt) best = t;
    return best;
  }
}
