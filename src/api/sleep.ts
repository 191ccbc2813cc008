/**
 * An abortable wait on the project's injectable clock (src/time/clock.ts), so the retry loop
 * and the rate limiter can be driven by a manual clock in tests.
 */
import type { Clock } from "../time/clock.ts";

/** Resolve after `ms` on `clock`; reject with `signal.reason` as soon as `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
