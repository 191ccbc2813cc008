/**
 * A clock for tests where every wait returns at once and moves time forward; the waits asked
 * for are read back from `sleeps`. (For waits a test must hold open, use ManualClock from
 * src/time/clock.ts.)
 */
import type { Clock, TimerHandle } from "../../../src/time/clock.ts";

export class FakeClock implements Clock {
  time = 1_700_000_000_000;
  /** Every delay asked for, in milliseconds, in order. */
  readonly sleeps: number[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    this.sleeps.push(ms);
    this.time += ms;
    const timer = { cancelled: false };
    queueMicrotask(() => {
      if (!timer.cancelled) fn();
    });
    return timer as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    (handle as unknown as { cancelled: boolean }).cancelled = true;
  }
}
