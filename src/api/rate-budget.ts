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
import { type CallLane, laneOf, WaitingLine } from "./budget-line.ts";
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

const wholeLimits = (l: BudgetLimits): BudgetLimits => ({
  perMinute: Math.max(1, Math.floor(l.perMinute)),
  perHour: Math.max(1, Math.floor(l.perHour)),
});

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** One bucket's state, as the status page and `/metrics` show it. */
export interface BucketSnapshot {
  bucket: BucketName;
  /** The limits: configured, the hour's as the server last reported it (its longest window). */
  perMinute: number;
  perHour: number;
  /** Calls this client started in the last minute and hour. */
  usedMinute: number;
  usedHour: number;
  /** Calls left in the hourly window: by this client's count, or the server's if it reported fewer. */
  remainingHour: number;
  /** Until when a 429 blocks the bucket (ms since the epoch), if it does now. */
  blockedUntil: number | undefined;
  /**
   * How long a live call asking now would wait before it starts (0: it would start at once): the
   * calls waiting ahead of it, the windows spent, or a 429's block. A kept-to limit's wait is this client's.
   */
  waitMs: number;
  /** Calls made since the budget was created (a daemon keeps one per account), and 429s received. */
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

/** A call's start reserved in a bucket ({@link RateBucket.reserve}): used by one call, or given back. */
export interface BudgetSlot {
  /** The call starting in it now: true the first time (it starts without taking another slot). */
  use(): boolean;
  /** Given back unused (no call will start in it); nothing once used. */
  release(): void;
}

/**
 * One bucket: a sliding minute and a sliding hour kept here, plus what the server last reported
 * (calls left until its reset). A call that finds no room waits in its lane (budget-line.ts) and
 * its start is recorded when its turn comes, so the windows hold exactly.
 */
export class RateBucket {
  /** Start times of the calls of the last hour and of the reserved ones, ascending. */
  readonly #starts: number[] = [];
  #blockedUntil = 0;
  /** The server's last report: its limit, calls left, when it frees up, and `calls` at that time. */
  #reported: { limit: number; remaining: number; resetAt: number; callsThen: number } | undefined;
  #configured: BudgetLimits;
  /** The calls waiting for room, and whether a loop starts them (asleep in `#nap` until room frees up). */
  readonly #line = new WaitingLine();
  #serving = false;
  #nap: AbortController | undefined;
  calls = 0;
  limited = 0;

  constructor(
    readonly name: BucketName,
    limits: BudgetLimits,
    readonly clock: Clock,
    /** false: count, but never wait (the client's rate limit is off). */
    readonly enforced: boolean,
  ) {
    this.#configured = wholeLimits(limits);
  }

  /** Plan with `limits` from now on (the calls counted so far still count). */
  configure(limits: BudgetLimits): void {
    this.#configured = wholeLimits(limits);
    this.#nap?.abort();
  }

  /**
   * The limits to plan with: the configured ones, the hour raised to the server's reported limit
   * when that is higher. The server reports only the limit of its longest window, not the window's
   * length, so a lower reported limit is not taken as hourly: {@link serverLeft} covers it.
   */
  get limits(): Readonly<BudgetLimits> {
    const configured = this.#configured;
    return { ...configured, perHour: Math.max(configured.perHour, this.#reported?.limit ?? 0) };
  }

  /** What the server last reported, until its reset: its limit and the calls left by its count. */
  serverLeft(now = this.clock.now()): { limit: number; remaining: number; resetAt: number } | undefined {
    const r = this.#reported;
    if (!r || r.resetAt <= now) return undefined;
    return {
      limit: r.limit,
      remaining: Math.max(0, r.remaining - (this.calls - r.callsThen)),
      resetAt: r.resetAt,
    };
  }

  /** Resolve when a call may start (at once while within budget); rejects if `signal` aborts. */
  async acquire(signal?: AbortSignal, lane?: CallLane): Promise<void> {
    await this.take(signal, lane);
  }

  /**
   * Resolves once a call may start, with that start reserved in the same step: work committed to
   * before the call (a report's claim) cannot lose the slot to another call meanwhile. The call
   * is handed the slot (its `slot` option) and starts in it without waiting; a slot no call will
   * use is given back with `release()`. `waits`: as for {@link take}.
   */
  async reserve(signal?: AbortSignal, lane?: CallLane, waits?: () => void): Promise<BudgetSlot> {
    return this.#slot(await this.#ask(signal, lane, waits));
  }

  #slot(at: number): BudgetSlot {
    let open = true;
    return {
      use: () => {
        const was = open;
        open = false;
        // The server counts the call from when it arrives: a start used after the work its
        // reservation covered (a report's claim, committed) moves to now, so the call a minute
        // after it is not a few ms early by the server's count (a 429).
        const now = this.clock.now();
        if (was && now > at) this.#moveStart(at, now);
        return was;
      },
      release: () => {
        if (!open) return;
        open = false;
        const index = this.#starts.lastIndexOf(at);
        if (index >= 0) this.#starts.splice(index, 1);
        this.calls--;
      },
    };
  }

  /** Move one recorded start from `from` to the later `to`, keeping the starts ascending. */
  #moveStart(from: number, to: number): void {
    const starts = this.#starts;
    const index = starts.lastIndexOf(from);
    if (index < 0) return;
    starts.splice(index, 1);
    let at = starts.length;
    while (at > 0 && (starts[at - 1] ?? 0) > to) at--;
    starts.splice(at, 0, to);
  }

  /**
   * {@link acquire} without a promise when the call may start at once (`undefined`); otherwise
   * the wait, in `lane` (see budget-line.ts): the call's start is recorded when its turn comes.
   * `waits` is called when the call must wait, before it joins the line (a {@link nextStartAt}
   * asked then is the call's own start). Throws at once if `signal` is already aborted, or
   * aborts in `waits`.
   */
  take(signal?: AbortSignal, lane?: CallLane, waits?: () => void): Promise<void> | undefined {
    const at = this.#ask(signal, lane, waits);
    return typeof at === "number" ? undefined : at.then(() => undefined);
  }

  /** The call's start: now, or when its turn comes. */
  #ask(
    signal: AbortSignal | undefined,
    lane: CallLane | undefined,
    waits?: () => void,
  ): number | Promise<number> {
    if (signal?.aborted) throw signal.reason;
    const now = this.clock.now();
    if (!this.enforced || (this.#line.size === 0 && this.#freeAt(now) <= now)) {
      this.#start(now);
      return now;
    }
    if (waits) {
      waits();
      if (signal?.aborted) throw signal.reason;
    }
    const turn = this.#line.add(laneOf(lane, signal), signal, () => this.#nap?.abort());
    void this.#serve();
    return turn;
  }

  #start(at: number): void {
    this.#starts.push(at);
    this.calls++;
  }

  /** Start the waiting calls as room frees up, one at a time, until none waits. */
  async #serve(): Promise<void> {
    if (this.#serving) return;
    this.#serving = true;
    try {
      while (this.#line.size > 0) {
        const now = this.clock.now();
        const at = this.#freeAt(now);
        if (at <= now) {
          this.#start(now);
          if (!this.#line.next(now)) this.#giveBack(now);
          continue;
        }
        this.#nap = new AbortController();
        await sleep(this.clock, at - now, this.#nap.signal).catch(() => undefined);
        this.#nap = undefined;
      }
    } finally {
      this.#serving = false;
    }
  }

  #giveBack(at: number): void {
    const index = this.#starts.lastIndexOf(at);
    if (index >= 0) this.#starts.splice(index, 1);
    this.calls--;
  }

  /**
   * The earliest time a call asking now in `lane` could start, after the waiting calls that start
   * before it (see `WaitingLine.ahead`: a live call passes the background ones but for their
   * share, a background call waits behind the live ones but for its lane's share).
   */
  nextStartAt(now = this.clock.now(), lane: CallLane = "live"): number {
    const waiting = this.#line.ahead(lane);
    const added: number[] = [];
    for (let i = 0; i < waiting; i++) {
      const at = this.#freeAt(now);
      this.#start(at);
      added.push(at);
    }
    const at = this.#freeAt(now);
    for (const a of added.reverse()) this.#giveBack(a);
    return at;
  }

  /**
   * The earliest time the next call could start, the waiting ones left aside: within the
   * configured minute, within the hour (the configured limit, or the server's if higher), after
   * a 429's `retry-after`, and not before the server's reset once the calls it said were left
   * are spent.
   */
  #freeAt(now: number): number {
    this.#prune(now);
    const starts = this.#starts;
    const { perMinute, perHour } = this.limits;
    let at = Math.max(now, this.#blockedUntil, starts.at(-1) ?? 0);
    // The limit-th newest start must have left its window before this call may start.
    const minuteBlocker = starts[starts.length - perMinute];
    if (minuteBlocker !== undefined) at = Math.max(at, minuteBlocker + MINUTE);
    const hourBlocker = starts[starts.length - perHour];
    if (hourBlocker !== undefined) at = Math.max(at, hourBlocker + HOUR);
    const reported = this.#reported;
    if (reported && this.calls - reported.callsThen >= reported.remaining && reported.resetAt > at) {
      at = reported.resetAt;
    }
    return at;
  }

  /** Learn from a response's `X-RateLimit-*` headers (they report the server's longest window). */
  observe(headers: ResponseHeaders): void {
    const limit = header(headers, "x-ratelimit-limit");
    const remaining = header(headers, "x-ratelimit-remaining");
    const reset = header(headers, "x-ratelimit-reset");
    if (limit === undefined || limit < 1 || remaining === undefined || reset === undefined) return;
    // The reset is a whole second rounded down: the window is certainly free a second later.
    this.#reported = {
      limit: Math.floor(limit),
      remaining: Math.max(0, Math.floor(remaining)),
      resetAt: (Math.floor(reset) + 1) * 1000,
      callsThen: this.calls,
    };
    // A reset sooner than planned for lets the waiting calls start sooner.
    this.#nap?.abort();
  }

  /**
   * A 429: no call of this bucket starts before `retryAfterMs` from now. Its headers report no
   * call left whichever rule refused it; a wait longer than a minute can only be the hour's, so
   * then the server's hourly limit is taken from them and none is left until the wait ends (calls
   * made before this client existed, a restart's, count on the server).
   */
  block(retryAfterMs: number, headers?: ResponseHeaders): void {
    this.limited++;
    const until = this.clock.now() + retryAfterMs;
    this.#blockedUntil = Math.max(this.#blockedUntil, until);
    const limit = headers && header(headers, "x-ratelimit-limit");
    if (retryAfterMs > MINUTE && limit !== undefined && limit >= 1)
      this.#reported = { limit: Math.floor(limit), remaining: 0, resetAt: until, callsThen: this.calls };
  }

  snapshot(now = this.clock.now()): BucketSnapshot {
    this.#prune(now);
    const usedHour = this.#countSince(now - HOUR, now);
    const server = this.serverLeft(now);
    const perHour = this.#reported?.limit ?? this.#configured.perHour;
    return {
      bucket: this.name,
      perMinute: this.#configured.perMinute,
      perHour,
      usedMinute: this.#countSince(now - MINUTE, now),
      usedHour,
      remainingHour: Math.min(Math.max(0, this.limits.perHour - usedHour), server?.remaining ?? perHour),
      blockedUntil: this.#blockedUntil > now ? this.#blockedUntil : undefined,
      waitMs: this.enforced ? this.nextStartAt(now) - now : 0,
      calls: this.calls,
      limited: this.limited,
    };
  }

  #countSince(from: number, to: number): number {
    let n = 0;
    for (let i = this.#starts.length - 1; i >= 0; i--) {
      const t = this.#starts[i] ?? 0;
      if (t <= from) break;
      if (t <= to) n++;
    }
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

  /** Plan both buckets with `limits` from now on. */
  configure(limits: BudgetLimits): void {
    this.events.configure(limits);
    this.other.configure(limits);
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
