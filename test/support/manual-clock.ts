/**
 * A clock for tests: time moves only when a test says so, and the async work each timer starts
 * gets to run before the next one fires. The testing kit's held {@link TestClock}, with the names
 * the unit tests read it by (`tick`, `tickTo`, `pendingTimers`, `nextDueAt`) and epoch 0 as its
 * default start.
 */
import { TestClock } from "../../src/testing/test-clock.ts";

/**
 * Let pending promise callbacks run: resolves after the microtask queue and one macrotask turn
 * have drained, a few times over, so `async` work started by a timer can reach its next `await`.
 */
export async function flushAsync(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A held {@link TestClock}: timers fire in due order (ties in creation order) as a tick passes
 * them, a timer due now on the next turn of the event loop, and async work they start gets to
 * run before the next timer fires.
 */
export class ManualClock extends TestClock {
  constructor(startMs = 0) {
    super({ start: startMs, held: true });
  }

  /** Number of timers not yet fired or cleared. */
  get pendingTimers(): number {
    return this.pendingDelays().length;
  }

  /** When the earliest pending timer is due, or `undefined` if none is pending. */
  nextDueAt(): number | undefined {
    const delays = this.pendingDelays();
    return delays.length === 0 ? undefined : this.now() + Math.min(...delays);
  }

  /** Move time forward by `ms`, firing every timer that comes due on the way. */
  tick(ms: number): Promise<void> {
    return this.advance(ms);
  }

  /** Move time forward to `epochMs`, firing every timer due up to and including it. */
  tickTo(epochMs: number): Promise<void> {
    return this.advanceTo(epochMs);
  }
}
