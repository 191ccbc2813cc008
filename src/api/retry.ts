/**
 * Which failures to retry and how long to wait first (grammY's handlePollingError, NOTES §5–6):
 * 401 never; 429 after the server's `retry-after`, for every call (the server did not act);
 * 5xx, non-JSON bodies and network failures with exponential backoff, full jitter and a cap,
 * but only when repeating the call is safe.
 */
import { backoffDelay } from "./backoff.ts";
import { ApiError, AuthError, BadResponseError, NetworkError, RateLimitError } from "./errors.ts";

/** Retry settings of a client. */
export interface RetryOptions {
  /** Attempts per call including the first. Default 4. */
  maxAttempts?: number;
  /** Backoff before the first retry is drawn from [0, baseDelayMs). Default 500. */
  baseDelayMs?: number;
  /** Upper bound of any backoff. Default 20 000. */
  maxDelayMs?: number;
  /** A 429 asking to wait longer than this is raised at once as `RateLimitError`. Default 60 000. */
  maxRateLimitWaitMs?: number;
  /** Random source in [0, 1) for the jitter; injectable for tests. Default `Math.random`. */
  random?: () => number;
}

export type RetryPolicy = Required<RetryOptions>;

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRateLimitWaitMs: 60_000,
  random: Math.random,
};

/** Resolve user options (`false` turns retrying off) into a full policy. */
export function resolveRetryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { ...defaultRetryPolicy, maxAttempts: 1 };
  return { ...defaultRetryPolicy, ...options };
}

export type RetryDecision = { retry: false } | { retry: true; delayMs: number; reason: string };

/**
 * Decide whether to try again after attempt number `attempt` (1-based) failed with `err`.
 * `idempotent` says whether the call may safely reach the server twice.
 */
export function decideRetry(
  err: unknown,
  attempt: number,
  idempotent: boolean,
  policy: RetryPolicy,
): RetryDecision {
  if (attempt >= policy.maxAttempts || err instanceof AuthError) return { retry: false };
  if (err instanceof RateLimitError) {
    if (err.retryAfterMs > policy.maxRateLimitWaitMs) return { retry: false };
    return { retry: true, delayMs: err.retryAfterMs, reason: "rate limited (429)" };
  }
  const backoff = () => {
    return Math.floor(backoffDelay(attempt, policy.baseDelayMs, policy.maxDelayMs, policy.random));
  };
  if (err instanceof NetworkError && (idempotent || !err.requestSent)) {
    return { retry: true, delayMs: backoff(), reason: err.timedOut ? "timed out" : "network error" };
  }
  if (!idempotent) return { retry: false };
  if (err instanceof BadResponseError)
    return { retry: true, delayMs: backoff(), reason: "non-JSON response" };
  if (err instanceof ApiError && err.status >= 500) {
    return { retry: true, delayMs: backoff(), reason: `server error ${err.status}` };
  }
  return { retry: false };
}
