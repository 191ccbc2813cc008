/**
 * Poll pacing: how long the long-poll loop waits before its next GET /events so that the account's
 * event-queue budget (2,000 calls an hour by default) lasts. While traffic is light each poll
 * goes out at once; under sustained traffic polls are spaced so a poll brings a batch of the
 * events that arrived meanwhile, instead of one poll per event running the budget dry.
 *
 * Two token buckets, one per window; a poll takes a token from each. Any hour therefore holds at
 * most `burst + rate × 1 h` polls and any minute `burst + rate × 1 min`, each below its budget by
 * the headroom left for catch-up after a reconnect (whose first poll is free) and for queue
 * deletions.
 * When the server reports fewer calls left than a burst (a lower per-user limit, or calls made
 * by another process), the calls it has left are spread evenly until its reset.
 */
import type { RateBucket } from "../api/rate-budget.ts";
import { sleep } from "../api/sleep.ts";
import type { Clock } from "../time/clock.ts";

const MINUTE = 60_000;
const HOUR = 3_600_000;

export interface PollPacingOptions {
  /** The account's event-queue budget (`client.budget.events`): its limits as best known. */
  bucket: Pick<RateBucket, "limits" | "enforced" | "serverLeft">;
  clock: Clock;
  /** Share of the hourly budget polls in steady state leave unused. Default 0.1. */
  headroom?: number;
}

/** What the pacing looks like now (the status page and `/metrics`). */
export interface PacingSnapshot {
  /** The wait before the latest poll, in ms (0 while traffic is light). */
  spacingMs: number;
  /** The spacing sustained traffic settles to (one hour divided by the polls it allows). */
  steadySpacingMs: number;
  /** Polls sent, and how many of them waited. */
  polls: number;
  held: number;
}

/** One token bucket: tokens per ms, and the most it holds. */
interface Shape {
  rate: number;
  burst: number;
}

export class PollPacer {
  readonly #o: PollPacingOptions;
  readonly #headroom: number;
  /** The hour's bucket, then the minute's; undefined until the first poll (full). */
  #tokens: [number | undefined, number | undefined] = [undefined, undefined];
  #at = 0;
  #spacingMs = 0;
  #polls = 0;
  #held = 0;

  constructor(options: PollPacingOptions) {
    this.#o = options;
    this.#headroom = options.headroom ?? 0.1;
  }

  /**
   * Take a turn for the next poll: 0 to send it now, else how many ms to wait first. Call once
   * per poll; the turn is reserved, so waiting polls keep the spacing.
   */
  take(): number {
    this.#polls++;
    this.#spacingMs = 0;
    if (!this.#o.bucket.enforced) return 0;
    const shapes = this.#shapes();
    const now = this.#o.clock.now();
    const elapsed = now - this.#at;
    this.#at = now;
    let wait = 0;
    this.#tokens = shapes.map(({ rate, burst }, i) => {
      const tokens = Math.min(burst, (this.#tokens[i] ?? burst) + elapsed * rate) - 1;
      if (tokens < 0) wait = Math.max(wait, Math.ceil(-tokens / rate));
      return tokens;
    }) as [number, number];
    const server = this.#o.bucket.serverLeft(now);
    if (server && server.remaining < shapes[0].burst) {
      wait = Math.max(wait, Math.ceil((server.resetAt - now) / (server.remaining + 1)));
    }
    this.#spacingMs = wait;
    if (this.#spacingMs > 0) this.#held++;
    return this.#spacingMs;
  }

  /** Wait `ms` (from {@link take}) on the pacer's clock; rejects as soon as `signal` aborts. */
  hold(ms: number, signal: AbortSignal): Promise<void> {
    return sleep(this.#o.clock, ms, signal);
  }

  /** A new queue: its first poll goes out at once, from the headroom. */
  resume(): void {
    this.#tokens = this.#tokens.map((t) => (t !== undefined && t < 1 ? 1 : t)) as [number, number];
  }

  snapshot(): PacingSnapshot {
    const [hour, minute] = this.#shapes();
    return {
      spacingMs: this.#spacingMs,
      steadySpacingMs: this.#o.bucket.enforced ? Math.round(1 / Math.min(hour.rate, minute.rate)) : 0,
      polls: this.#polls,
      held: this.#held,
    };
  }

  /**
   * The two buckets, from the budget as best known now. The hour's: tokens at the hourly budget
   * less the headroom, half the headroom for bursts, within half a minute's budget. The minute's:
   * a burst of a quarter of the minute's budget, then tokens at what keeps any minute within the
   * budget less the headroom (130 a minute at the default 200). At the default 2,000 an hour the
   * hour's is the tighter; where the server reports an hourly limit above sixty minutes' worth,
   * the minute's spaces the polls instead of letting them fill the sliding minute and then wait
   * for its first call to leave it.
   */
  #shapes(): [Shape, Shape] {
    const { perHour, perMinute } = this.#o.bucket.limits;
    const hourBurst = Math.max(1, Math.min((perHour * this.#headroom) / 2, perMinute / 2));
    const minuteBurst = Math.max(1, perMinute / 4);
    return [
      { rate: (perHour * (1 - this.#headroom)) / HOUR, burst: hourBurst },
      { rate: Math.max(perMinute * (1 - this.#headroom) - minuteBurst, 1) / MINUTE, burst: minuteBurst },
    ];
  }
}
