/**
 * An account's call budgets as the server keeps them. The server allows each account a number of
 * calls per sliding minute and per sliding hour (200 and 2,000 by default, configurable per user),
 * and counts the event-queue calls (GET and DELETE /events, served by its event server) in a
 * bucket of their own, apart from every other call. So a client keeps two buckets with two windows
 * each: a long-poll never makes a send wait, and a 429 blocks only the bucket it came from.
 *
 * The figures are learned from the server: `X-RateLimit-Limit` and `X-RateLimit-Remaining` report
 * the longest (hourly) window of the rules that apply to the account, `X-RateLimit-Reset` the
 * UNIX second it frees up, and a 429 carries `retry-after` in (fractional) seconds.
 */
import type { Clock } from "../time/clock.ts";
import { sleep } from "./sleep.ts";

/** `events`: GET and DELETE /events, counted by the event server; `other`: every other call. */
export type BucketName = "events" | "other";

/** Which budget a call counts against. POST /register is an ordinary call. */
export function bucketOf(method: string, path: string): BucketName {
  return path === "/events" && (method === "GET" || method === "DELETE") ? "events" : "other";
}

/** Calls allowed per sliding minute and per sliding hour. */
export interface BudgetLimits {
  perMinute: number;
  perHour: number;
}

/** The server's defaults for every account, bots included. */
export const DEFAULT_BUDGET: BudgetLimits = { perMinute: 200, perHour: 2000 };

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** One bucket's state, as the status page and `/metrics` show it. */
export interface BucketSnapshot {
  bucket: BucketName;
  /** The limits in force: configured, or learned from the server's headers. */
  perMinute: number;
  perHour: number;
  /** Calls started in the last minute and hour (calls the server reported beyond ours included). */
  usedMinute: number;
  usedHour: number;
  /** Calls left in the hourly window. */
  remainingHour: number;
  /** Until when a 429 blocks the bucket (ms since the epoch), if it does now. */
  blockedUntil: number | undefined;
  /** Calls made since the client was created, and 429s received. */
  calls: number;
  limited: number;
}

/** Rate-limit headers of one response, as undici hands them over. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

const header = (headers: ResponseHeaders, name: string): number | undefined => {
  const raw = headers[name];
  const value = Number.parseFloat(Array.isArray(raw) ? (raw[0] ?? "") : (raw ?? ""));
  return Number.isFinite(value) ? value : undefined;
};

/**
 * One bucket: a sliding minute and a sliding hour. Each call reserves its start when it asks, so
 * waiting calls start in the order they asked and the windows hold exactly.
 */
export class RateBucket {
  /** Start times of the calls of the last hour and of the reserved ones, ascending. */
  readonly #starts: number[] = [];
  #blockedUntil = 0;
  /** Calls the server counted that this client did not make (another process, a restart). */
  #unknown = { count: 0, until: 0 };
  readonly #configured: BudgetLimits;
  #limits: BudgetLimits;
  calls = 0;
  limited = 0;

  constructor(
    readonly name: BucketName,
    limits: BudgetLimits,
    readonly clock: Clock,
    /** false: count, but never wait (the client's rate limit is off). */
    readonly enforced: boolean,
  ) {
    const whole = (n: number) => Math.max(1, Math.floor(n));
    this.#configured = { perMinute: whole(limits.perMinute), perHour: whole(limits.perHour) };
    this.#limits = { ...this.#configured };
  }

  get limits(): Readonly<BudgetLimits> {
    return this.#limits;
  }

  /** Resolve when a call may start (at once while within both windows); rejects if `signal` aborts. */
  async acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    const now = this.clock.now();
    const startAt = this.enforced ? this.nextStartAt(now) : now;
    this.#starts.push(startAt);
    this.calls++;
    if (startAt <= now) return;
    try {
      await sleep(this.clock, startAt - now, signal);
    } catch (err) {
      // Give the reserved slot back so an aborted call does not delay the others.
      const index = this.#starts.lastIndexOf(startAt);
      if (index >= 0) this.#starts.splice(index, 1);
      this.calls--;
      throw err;
    }
  }

  /** The earliest time a call asking now could start. */
  nextStartAt(now = this.clock.now()): number {
    this.#prune(now);
    const starts = this.#starts;
    const { perMinute, perHour } = this.#limits;
    const unknown = now < this.#unknown.until ? this.#unknown.count : 0;
    let at = Math.max(now, this.#blockedUntil, starts.at(-1) ?? 0);
    // The limit-th newest start must have left its window before this call may start.
    const minuteBlocker = starts[starts.length - perMinute];
    if (minuteBlocker !== undefined) at = Math.max(at, minuteBlocker + MINUTE);
    const hourRoom = perHour - unknown;
    if (hourRoom <= 0) at = Math.max(at, this.#unknown.until);
    else {
      const hourBlocker = starts[starts.length - hourRoom];
      if (hourBlocker !== undefined) at = Math.max(at, hourBlocker + HOUR);
    }
    return at;
  }

  /** Learn from a response's `X-RateLimit-*` headers (they report the hourly window). */
  observe(headers: ResponseHeaders): void {
    const limit = header(headers, "x-ratelimit-limit");
    const remaining = header(headers, "x-ratelimit-remaining");
    if (limit === undefined || limit < 1) return;
    const now = this.clock.now();
    this.#learnHourLimit(Math.floor(limit));
    if (remaining === undefined) return;
    const reset = header(headers, "x-ratelimit-reset");
    const serverUsed = limit - remaining;
    const ours = this.#countSince(now - HOUR, now);
    const beyond = serverUsed - ours;
    // The server's reset is when its oldest counted call leaves the window: the calls it counted
    // beyond ours are held until then (at least a minute, if it sent no reset).
    const until = reset !== undefined && reset * 1000 > now ? reset * 1000 : now + MINUTE;
    this.#unknown = beyond > 0 ? { count: beyond, until } : { count: 0, until: 0 };
  }

  /** A 429: no call of this bucket starts before `retryAfterMs` from now. */
  block(retryAfterMs: number): void {
    this.limited++;
    this.#blockedUntil = Math.max(this.#blockedUntil, this.clock.now() + retryAfterMs);
  }

  snapshot(now = this.clock.now()): BucketSnapshot {
    this.#prune(now);
    const unknown = now < this.#unknown.until ? this.#unknown.count : 0;
    const usedHour = this.#countSince(now - HOUR, now) + unknown;
    return {
      bucket: this.name,
      ...this.#limits,
      usedMinute: this.#countSince(now - MINUTE, now),
      usedHour,
      remainingHour: Math.max(0, this.#limits.perHour - usedHour),
      blockedUntil: this.#blockedUntil > now ? this.#blockedUntil : undefined,
      calls: this.calls,
      limited: this.limited,
    };
  }

  /**
   * The server reports only the hourly limit. A lower one than configured lowers the minute
   * window in proportion (a per-user rule such as 10 a minute and 100 an hour); a higher one
   * never raises the minute window beyond what is configured.
   */
  #learnHourLimit(perHour: number): void {
    if (perHour === this.#limits.perHour) return;
    const configured = this.#configured;
    const scaled = Math.max(1, Math.floor((configured.perMinute * perHour) / configured.perHour));
    this.#limits = { perHour, perMinute: Math.min(configured.perMinute, scaled, perHour) };
  }

  #countSince(from: number, to: number): number {
    let n = 0;
    for (const t of this.#starts) if (t > from && t <= to) n++;
    return n;
  }

  #prune(now: number): void {
    const starts = this.#starts;
    let drop = 0;
    while (drop < starts.length && (starts[drop] ?? 0) <= now - HOUR) drop++;
    if (drop > 0) starts.splice(0, drop);
  }
}

/** Both budgets of one account. `client.budget` is this. */
export class RateBudget {
  readonly events: RateBucket;
  readonly other: RateBucket;

  constructor(
    limits: BudgetLimits,
    readonly clock: Clock,
    /** false: calls are counted but never held (the client's rate limit is off). */
    readonly enforced: boolean,
  ) {
    this.events = new RateBucket("events", limits, clock, enforced);
    this.other = new RateBucket("other", limits, clock, enforced);
  }

  /** The bucket a call counts against. */
  of(method: string, path: string): RateBucket {
    return bucketOf(method, path) === "events" ? this.events : this.other;
  }

  snapshot(): BucketSnapshot[] {
    const now = this.clock.now();
    return [this.events.snapshot(now), this.other.snapshot(now)];
  }
}
