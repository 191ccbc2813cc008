/**
 * How a failing handler is run again (config `retries`): after `backoffMs`, doubling up to
 * `maxBackoffMs`, until it has run `attempts` times (see handler-failures.ts).
 */

export interface RetryPolicy {
  /** Runs in all, the first included (1: never retried). */
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
}

/** The pause before run `n + 1` after run `n` failed (n ≥ 1). */
export function retryDelay(policy: RetryPolicy, n: number): number {
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (n - 1));
}
