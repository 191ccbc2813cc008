/**
 * Running a failing handler again: after `backoffMs`, doubling up to `maxBackoffMs`, until it has
 * run `attempts` times. A {@link NoRetry} ends the runs at once. The caller holds the event's
 * conversation while this runs, so later events of that conversation wait behind it (for at most
 * the sum of the pauses plus the runs) and keep their order; other conversations go on.
 */
import { sleep } from "../api/sleep.ts";
import { NoRetry } from "../errors/no-retry.ts";
import type { Clock } from "../time/clock.ts";

export interface RetryPolicy {
  /** Runs in all, the first included (1: never retried). */
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
}

export type RetryOutcome =
  | { ok: true; attempts: number }
  | {
      ok: false;
      /** The last run's error. */
      error: unknown;
      attempts: number;
      firstFailedAt: number;
      lastFailedAt: number;
      /** The signal aborted during a pause (the bot is stopping): runs were left. */
      interrupted: boolean;
    };

/** The pause before run `n + 1` after run `n` failed (n ≥ 1). */
export function retryDelay(policy: RetryPolicy, n: number): number {
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (n - 1));
}

/**
 * @example
 * ```ts
 * const outcome = await runWithRetries(() => handler(ctx), { attempts: 5, backoffMs: 2_000, maxBackoffMs: 30_000 }, { clock, signal });
 * if (!outcome.ok) await letters.add({ ... });
 * ```
 */
export async function runWithRetries(
  run: (attempt: number) => unknown,
  policy: RetryPolicy,
  deps: {
    clock: Clock;
    signal: AbortSignal;
    onRetry?: (attempt: number, error: unknown, delayMs: number) => void;
  },
): Promise<RetryOutcome> {
  let firstFailedAt: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      await run(attempt);
      return { ok: true, attempts: attempt };
    } catch (error) {
      const now = deps.clock.now();
      firstFailedAt ??= now;
      const failed = { ok: false as const, error, attempts: attempt, firstFailedAt, lastFailedAt: now };
      if (attempt >= policy.attempts || error instanceof NoRetry || deps.signal.aborted) {
        return {
          ...failed,
          interrupted: deps.signal.aborted && !(error instanceof NoRetry) && attempt < policy.attempts,
        };
      }
      const delay = retryDelay(policy, attempt);
      deps.onRetry?.(attempt, error, delay);
      try {
        await sleep(deps.clock, delay, deps.signal);
      } catch {
        return { ...failed, interrupted: true };
      }
    }
  }
}
