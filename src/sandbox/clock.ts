/** Anything with `now()` in milliseconds since the epoch, e.g. `Date` or a test's fake clock. */
export interface Clock {
  now(): number;
}

/**
 * The sandbox's time: an injectable base clock plus an offset that `control.advanceClock(ms)`
 * grows, so tests can jump ahead without touching the base clock.
 */
export class SandboxClock implements Clock {
  private offsetMs = 0;

  constructor(private readonly base: Clock = Date) {}

  now(): number {
    return this.base.now() + this.offsetMs;
  }

  /** Whole UNIX seconds, the unit of every `*_timestamp` on the wire. */
  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
