/**
 * A client-side sliding-window limiter. The server allows 200 calls per minute per account
 * (NOTES §6) and answers 429 beyond that; waiting here first is cheaper than being refused.
 */
import type { Clock } from "../time/clock.ts";
import { sleep } from "./sleep.ts";

export interface RateLimiter {
  /** Resolve when a call may start (at once while under the limit); rejects if `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<void>;
}

/** A limiter that never waits (rate limiting disabled). */
export const unlimited: RateLimiter = { acquire: () => Promise.resolve() };

/**
 * At most `limit` calls start within any `windowMs`. Each call reserves its start time when it
 * asks, so waiting calls start in the order they asked.
 *
 * @example
 * ```ts
 * const limiter = createSlidingWindowLimiter({ limit: 200, windowMs: 60_000, clock: realClock });
 * await limiter.acquire(signal);
 * ```
 */
export function createSlidingWindowLimiter(options: {
  limit: number;
  windowMs: number;
  clock: Clock;
}): RateLimiter {
  const { limit, windowMs, clock } = options;
  // Start times of recent and reserved calls, ascending.
  const starts: number[] = [];

  return {
    async acquire(signal) {
      if (signal?.aborted) throw signal.reason;
      const now = clock.now();
      while (starts.length > 0 && (starts[0] ?? 0) <= now - windowMs) starts.shift();
      // The limit-th newest start must have left the window before this call may start.
      const blocking = starts.length >= limit ? starts[starts.length - limit] : undefined;
      const startAt = blocking === undefined ? now : Math.max(now, blocking + windowMs);
      insertSorted(starts, startAt);
      if (startAt <= now) return;
      try {
        await sleep(clock, startAt - now, signal);
      } catch (err) {
        // Give the reserved slot back so an aborted call does not delay the others.
        const index = starts.lastIndexOf(startAt);
        if (index >= 0) starts.splice(index, 1);
        throw err;
      }
    },
  };
}

function insertSorted(list: number[], value: number): void {
  let i = list.length;
  while (i > 0 && (list[i - 1] ?? 0) > value) i--;
  list.splice(i, 0, value);
}
