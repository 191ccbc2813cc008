/**
 * The transport's retry policy: a client's retry settings, whether a failed attempt is tried
 * again and after how long, and the wait a 429 asks for. Pure functions of the error and the
 * settings; the transport (transport.ts) does the waiting.
 */
import {
  ApiError,
  AuthError,
  BadResponseError,
  ClientConfigError,
  NetworkError,
  RateLimitError,
} from "./errors.ts";
import { backoffDelay } from "./sleep.ts";

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

/** Retry settings with every default filled in. */
export type RetryPolicy = Required<RetryOptions>;

/** The retries a client makes unless told otherwise. */
export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRateLimitWaitMs: 60_000,
  random: Math.random,
};

/** The least value of each numeric retry setting. */
const LEAST = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, maxRateLimitWaitMs: 0 } as const;

/**
 * `policy` with `options` applied; `false`: one attempt only. A setting given as `undefined` keeps
 * the policy's (else `maxAttempts: undefined` would retry without end); one of the wrong type or
 * range is refused with `CLIENT_CONFIG_INVALID`, naming it.
 */
export function withRetry(policy: RetryPolicy, options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { ...policy, maxAttempts: 1 };
  const applied: RetryPolicy = { ...policy };
  for (const [name, value] of Object.entries(options ?? {})) {
    if (value === undefined) continue;
    if (name === "random" && typeof value === "function") applied.random = value as () => number;
    else if (name in LEAST)
      applied[name as keyof typeof LEAST] = checkedSetting(name as keyof typeof LEAST, value);
    else {
      const known = [...Object.keys(LEAST), "random"].join(", ");
      throw new ClientConfigError(
        `option \`retry.${name}\` is not a retry setting: the settings are ${known}.`,
      );
    }
  }
  return applied;
}

function checkedSetting(name: keyof typeof LEAST, value: unknown): number {
  const whole = name === "maxAttempts";
  const fits =
    typeof value === "number" &&
    value >= LEAST[name] &&
    (whole ? Number.isInteger(value) || value === Number.POSITIVE_INFINITY : !Number.isNaN(value));
  if (fits) return value;
  const wanted = whole ? "a whole number, 1 or more" : "a number of milliseconds, 0 or more";
  const got = typeof value === "string" ? `the string ${JSON.stringify(value)}` : String(value);
  throw new ClientConfigError(`option \`retry.${name}\` must be ${wanted}, got ${got}.`);
}

/**
 * Whether to try again after attempt `attempt` (1-based) failed with `err`, and after how long:
 * 401 never; 429 after the server's `retry-after`, for every call (the server did not act); 5xx,
 * non-JSON bodies and network failures with backoff, but only when repeating the call is safe.
 */
export function decideRetry(
  err: unknown,
  attempt: number,
  idempotent: boolean,
  policy: RetryPolicy,
): { retry: false } | { retry: true; delayMs: number; reason: string } {
  if (attempt >= policy.maxAttempts || err instanceof AuthError) return { retry: false };
  if (err instanceof RateLimitError) {
    if (err.retryAfterMs > policy.maxRateLimitWaitMs) return { retry: false };
    return { retry: true, delayMs: err.retryAfterMs, reason: "rate limited (429)" };
  }
  const backoff = () =>
    Math.floor(backoffDelay(attempt, policy.baseDelayMs, policy.maxDelayMs, policy.random));
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

/** `retry-after` from the body (a float in seconds) or the header; 1 s when absent. */
export function retryAfterMs(
  fromBody: unknown,
  headers: Record<string, string | string[] | undefined>,
): number {
  const header = headers["retry-after"];
  const seconds =
    typeof fromBody === "number"
      ? fromBody
      : Number.parseFloat(Array.isArray(header) ? (header[0] ?? "") : (header ?? ""));
  if (!Number.isFinite(seconds) || seconds < 0) return 1000;
  // Round up (but not for float noise such as 0.1 * 1000), so the retry never comes early.
  return Math.ceil(seconds * 1000 - 1e-6);
}
