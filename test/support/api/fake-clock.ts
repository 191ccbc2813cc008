/**
 * The ManualClock (../manual-clock.ts) driving itself: each wait asked for moves time forward to
 * its end and fires at once, so code that waits (retries, backoff, rate limits) runs without
 * real pauses; the waits asked for are read back from `sleeps`.
 */
import type { TimerHandle } from "../../../src/time/clock.ts";
import { ManualClock } from "../manual-clock.ts";

export class FakeClock extends ManualClock {
  /** Every delay asked for, in milliseconds, in order. */
  readonly sleeps: number[] = [];

  constructor() {
    super(1_700_000_000_000);
  }

  override setTimeout(fn: () => void, ms: number): TimerHandle {
    this.sleeps.push(ms);
    const handle = super.setTimeout(fn, ms);
    void this.tick(ms);
    return handle;
  }
}
