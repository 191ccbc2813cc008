/** Exponential backoff with full jitter (client retries, the queue consumer), and an abortable pause. */
import { realClock } from "../time/clock.ts";
import { sleep } from "./sleep.ts";

/** Waits `ms`, rejecting as soon as `signal` aborts. Injectable so tests need not wait. */
export type Pause = (ms: number, signal: AbortSignal) => Promise<void>;

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
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
  return random() * ceiling;
}

/** The real pause: an abortable sleep on the real clock. */
export const realPause: Pause = (ms, signal) => sleep(realClock, ms, signal);
