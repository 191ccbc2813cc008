/**
 * The per-account rate limits as the server applies them: sliding windows (200 calls a minute and
 * 2,000 an hour by default), counted per user, with the event-queue calls (GET and DELETE /events,
 * which the server's event process counts in its own memory) in a bucket apart from every other
 * authenticated call. Rules can be set per user, as the server's per-user rate-limit settings allow.
 * Every checked response carries `X-RateLimit-*` headers for the LAST rule (the hourly one with
 * the defaults), as the server's code reports them; a refused call gets a 429 with a float
 * `retry-after`.
 */
import { ApiError } from "./api-error.ts";

/** `[window seconds, calls allowed in it]`, like the server's `(60, 200)`. */
export type RateRule = [windowSeconds: number, maxCalls: number];

export const DEFAULT_RATE_RULES: RateRule[] = [
  [60, 200],
  [3600, 2000],
];

export const RATE_LIMIT_MSG =
  "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers";

/** `events`: GET and DELETE /events; `other`: every other authenticated call. */
export type RateBucketName = "events" | "other";

/** The bucket a request counts against (the path is below /api/v1). */
export function rateBucketOf(method: string, apiPath: string): RateBucketName {
  return apiPath === "/events" && (method === "GET" || method === "DELETE") ? "events" : "other";
}

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

/** The `X-RateLimit-*` headers of a refused call: the last rule's count, none left, free after `wait`. */
function refusedHeaders(rules: RateRule[], nowMs: number, wait: number): Record<string, string> {
  const [, lastMax] = rules[rules.length - 1] ?? [3600, 2000];
  return {
    "X-RateLimit-Limit": String(lastMax),
    "X-RateLimit-Remaining": "0",
    "X-RateLimit-Reset": String(Math.floor(nowMs / 1000 + wait)),
  };
}

/** Calls counted in one bucket of one user, and what was refused. */
export interface RateCount {
  calls: number;
  refused: number;
}

/** Sliding windows per user and bucket, on the sandbox's clock. */
export class RateLimiter {
  /** Start times per `userId:bucket`, ascending, within the longest window. */
  private readonly calls = new Map<string, number[]>();
  private readonly perUser = new Map<number, RateRule[]>();
  private readonly counts = new Map<string, RateCount>();

  constructor(
    /** The rules of every user without rules of their own. */
    public rules: RateRule[] = DEFAULT_RATE_RULES,
    public enabled = true,
  ) {}

  /** Give one user their own rules (`undefined`: back to the sandbox's). */
  setUserRules(userId: number, rules: RateRule[] | undefined): void {
    if (rules) this.perUser.set(userId, rules);
    else this.perUser.delete(userId);
  }

  rulesOf(userId: number): RateRule[] {
    return this.perUser.get(userId) ?? this.rules;
  }

  /** Calls and refusals so far, per user and bucket. */
  countOf(userId: number, bucket: RateBucketName): RateCount {
    return { ...(this.counts.get(`${userId}:${bucket}`) ?? { calls: 0, refused: 0 }) };
  }

  /**
   * The 429 of an injected refusal, shaped as a counted one: its headers report the rules of
   * `userId` (the sandbox's rules when the caller is unknown). Nothing is counted.
   */
  injectedRefusal(userId: number | undefined, nowMs: number, retryAfter: number): ApiError {
    const rules = userId === undefined ? this.rules : this.rulesOf(userId);
    return rateLimitError(retryAfter, refusedHeaders(rules, nowMs, retryAfter));
  }

  /** Count one call at `nowMs`; returns the headers, or throws the 429 (which counts nothing). */
  hit(userId: number, bucket: RateBucketName, nowMs: number): Record<string, string> {
    if (!this.enabled) return {};
    const key = `${userId}:${bucket}`;
    const rules = this.rulesOf(userId);
    const count = this.counts.get(key) ?? { calls: 0, refused: 0 };
    this.counts.set(key, count);
    const longest = Math.max(...rules.map(([w]) => w)) * 1000;
    const times = this.calls.get(key) ?? [];
    this.calls.set(key, times);
    let drop = 0;
    while (drop < times.length && (times[drop] ?? 0) <= nowMs - longest) drop++;
    if (drop > 0) times.splice(0, drop);
    let wait = 0;
    for (const [window, max] of rules) {
      const inWindow = countSince(times, nowMs - window * 1000);
      if (inWindow >= max) {
        const nth = times[times.length - max] ?? nowMs;
        wait = Math.max(wait, (nth + window * 1000 - nowMs) / 1000);
      }
    }
    const [lastWindow, lastMax] = rules[rules.length - 1] ?? [3600, 2000];
    if (wait > 0) {
      count.refused++;
      throw rateLimitError(wait, refusedHeaders(rules, nowMs, wait));
    }
    times.push(nowMs);
    count.calls++;
    const used = countSince(times, nowMs - lastWindow * 1000);
    const oldest = times[times.length - used] ?? nowMs;
    return {
      "X-RateLimit-Limit": String(lastMax),
      "X-RateLimit-Remaining": String(Math.max(0, lastMax - used)),
      "X-RateLimit-Reset": String(Math.floor((oldest + lastWindow * 1000) / 1000)),
    };
  }
}

/** How many of the ascending `times` are later than `from`. */
function countSince(times: number[], from: number): number {
  let n = 0;
  for (let i = times.length - 1; i >= 0 && (times[i] ?? 0) > from; i--) n++;
  return n;
}
