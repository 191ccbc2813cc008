/**
 * The server's per-user API rate limiter (NOTES §6): sliding windows, default 200/min and
 * 2000/hour. Headers report the LAST rule (the hourly one), as the server's code does.
 */
import { ApiError } from "./http/api-error.ts";

export type RateRule = [windowSeconds: number, maxCalls: number];

export const DEFAULT_RATE_RULES: RateRule[] = [
  [60, 200],
  [3600, 2000],
];

export const RATE_LIMIT_MSG =
  "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers";

/** `Retry-After` as the server writes it: a float, so 2 is "2.0". */
export function formatRetryAfter(seconds: number): string {
  return Number.isInteger(seconds) ? seconds.toFixed(1) : String(seconds);
}

export function rateLimitError(retryAfter: number, headers: Record<string, string> = {}): ApiError {
  return new ApiError(
    429,
    "RATE_LIMIT_HIT",
    RATE_LIMIT_MSG,
    { "retry-after": retryAfter },
    { ...headers, "Retry-After": formatRetryAfter(retryAfter) },
  );
}

export class RateLimiter {
  private readonly calls = new Map<number, number[]>();

  constructor(public rules: RateRule[] = DEFAULT_RATE_RULES) {}

  /** Count one call at `nowMs`; returns the headers, or throws the 429. */
  hit(userId: number, nowMs: number): Record<string, string> {
    const longest = Math.max(...this.rules.map(([w]) => w));
    const times = (this.calls.get(userId) ?? []).filter((t) => t > nowMs - longest * 1000);
    this.calls.set(userId, times);
    let wait = 0;
    for (const [window, max] of this.rules) {
      const inWindow = times.filter((t) => t > nowMs - window * 1000);
      if (inWindow.length >= max) {
        const nth = inWindow[inWindow.length - max]!;
        wait = Math.max(wait, (nth + window * 1000 - nowMs) / 1000);
      }
    }
    const [lastWindow, lastMax] = this.rules[this.rules.length - 1]!;
    if (wait > 0) {
      throw rateLimitError(wait, {
        "X-RateLimit-Limit": String(lastMax),
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": String(Math.floor(nowMs / 1000 + wait)),
      });
    }
    times.push(nowMs);
    const used = times.filter((t) => t > nowMs - lastWindow * 1000);
    const oldest = used[0] ?? nowMs;
    return {
      "X-RateLimit-Limit": String(lastMax),
      "X-RateLimit-Remaining": String(Math.max(0, lastMax - used.length)),
      "X-RateLimit-Reset": String(Math.floor((oldest + lastWindow * 1000) / 1000)),
    };
  }
}
