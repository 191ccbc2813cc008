/**
 * A clock for tests: time moves only when a test says so, and the async work each timer starts
 * gets to run before the next one fires.
 */
import type { Clock, TimerHandle } from "../../src/time/clock.ts";

interface ManualTimer {
  dueAt: number;
  fn: () => void;
}

/**
 * Let pending promise callbacks run: resolves after the microtask queue and one macrotask turn
 * have drained, a few times over, so `async` work started by a timer can reach its next `await`.
 */
export async function flushAsync(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A clock that only moves when told to. Timers fire in due order (ties in creation order), and
 * async work they start gets to run ({@link flushAsync}) before the next timer fires.
 */
export class ManualClock implements Clock {
  #now: number;
  readonly #timers = new Set<ManualTimer>();

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { dueAt: this.#now + Math.max(0, ms), fn };
    this.#timers.add(timer);
    return timer as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as unknown as ManualTimer);
  }

  /** Number of timers not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** When the earliest pending timer is due, or `undefined` if none is pending. */
  nextDueAt(): number | undefined {
    return this.#earliest()?.dueAt;
  }

  /** Move time forward by `ms`, firing every timer that comes due on the way. */
  async tick(ms: number): Promise<void> {
    await this.tickTo(this.#now + ms);
  }

  /** Move time forward to `epochMs`, firing every timer due up to and including it. */
  async tickTo(epochMs: number): Promise<void> {
    await flushAsync();
    for (;;) {
      const next = this.#earliest();
      if (next === undefined || next.dueAt > epochMs) break;
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.dueAt);
      next.fn();
      await flushAsync();
    }
    this.#now = Math.max(this.#now, epochMs);
  }

  // The Set iterates in creation order, so the first of equally due timers wins.
  #earliest(): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.#timers) if (best === undefined || t.dueAt < best.dueAt) best = t;
    return best;
  }
}
