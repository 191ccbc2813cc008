/** Abortable waits on the injectable clock (src/time/clock.ts), so tests can drive them; backoff delays. */
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

/**
 * `work`'s outcome, or a rejection with `signal.reason` as soon as `signal` aborts (at once if it
 * already has). `work` itself goes on; its later outcome is dropped.
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A signal that aborts after `ms` on `clock` (`AbortSignal.timeout` on an injectable clock), with
 * `reason()` or a `TimeoutError`. Call `clear()` once the work it bounds ended, so no timer
 * outlives it.
 */
export function timeoutSignal(
  clock: Clock,
  ms: number,
  reason: () => unknown = () => new DOMException("The operation was aborted due to timeout", "TimeoutError"),
): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const handle = clock.setTimeout(() => controller.abort(reason()), ms);
  return { signal: controller.signal, clear: () => clock.clearTimeout(handle) };
}

/**
 * Delay before retry number `attempt` (1-based): a random point in [0, min(cap, initial·2^(attempt-1))].
 * Full jitter spreads many bots' retries after a shared outage instead of synchronising them.
 */
export function backoffDelay(
  attempt: number,
  initialMs: number,
  maxMs: number,
  random: () => number,
): number {
  return random() * Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
}
