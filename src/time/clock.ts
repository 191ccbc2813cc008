/**
 * Injectable time. Every helper that waits or reads the time takes a {@link Clock}, so tests can
 * drive time by hand (test/support/manual-clock.ts) instead of sleeping.
 */

/** An opaque timer handle; only the clock that made it can clear it. */
export type TimerHandle = { readonly __timerHandle: true };

/** The three time operations bothost needs. */
export interface Clock {
  /** Milliseconds since the UNIX epoch, like `Date.now()`. */
  now(): number;
  /** Run `fn` once after `ms` milliseconds (any non-negative delay, even beyond 2^31-1). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancel a timer; clearing an already fired or cleared timer does nothing. */
  clearTimeout(handle: TimerHandle): void;
}

/**
 * A monotonic reading in milliseconds, for durations that are reported (metrics histograms):
 * finer than a millisecond and immune to steps of the wall clock. Nothing compares it with the
 * server's time, so it stays outside {@link Clock}; {@link realClock} also ends a wait on it.
 */
export const monotonicMs = (): number => performance.now();

/** Resolves after the current event-loop turn (its microtasks and pending I/O callbacks); no time is read. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The largest delay Node's `setTimeout` honours; longer ones fire after 1 ms with a warning. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * The longest a real timer waits before reading the wall clock again. Node's timers run on the
 * monotonic clock, which stands still while the machine sleeps and ignores steps of the wall clock:
 * a long wait alone would fire hours late after a laptop's night asleep or an NTP step.
 */
const WALL_CHECK_MS = 60_000;

interface RealTimer {
  current: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The real clock: `Date.now()` and Node timers. A delay is waited in steps of at most a minute,
 * each ending with a look at the wall clock, so a timer fires when `Date.now()` reaches its time
 * (within a minute) after the machine slept or its clock was stepped forward; and once the delay
 * has passed on the monotonic clock, so a step back of the wall clock holds no timer that long.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer: RealTimer = { current: undefined };
    const wait = Math.max(0, ms);
    const dueAt = Date.now() + wait;
    const started = monotonicMs();
    const arm = (delay: number) => {
      timer.current = setTimeout(
        () => {
          const left = Math.min(dueAt - Date.now(), wait - (monotonicMs() - started));
          if (left > 0) arm(left);
          else {
            timer.current = undefined;
            fn();
          }
        },
        Math.min(delay, WALL_CHECK_MS),
      );
    };
    arm(wait);
    return timer as unknown as TimerHandle;
  },
  clearTimeout(handle) {
    const timer = handle as unknown as RealTimer;
    if (timer.current !== undefined) clearTimeout(timer.current);
    timer.current = undefined;
  },
};

/** The clock for waits: `clock` itself if it can set timers (the daemon's), else the real one. */
export const timersOf = (clock: Pick<Clock, "now"> & Partial<Clock>): Clock =>
  clock.setTimeout && clock.clearTimeout ? (clock as Clock) : realClock;
