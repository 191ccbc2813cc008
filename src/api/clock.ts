/**
 * Time, injectable: the retry loop and the rate limiter only ever read time and wait through a
 * clock, so tests can drive them without waiting for real.
 */

/** A source of "now" (milliseconds since the epoch) and an abortable sleep. */
export interface Clock {
  now(): number;
  /** Resolve after `ms`; reject with `signal.reason` as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `Date.now()` and a timer. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => abortableSleep(ms, signal),
};

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
