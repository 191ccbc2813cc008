/**
 * Poll pacing: how long the long-poll loop waits before its next GET /events so that the account's
 * event-queue budget (2,000 calls an hour by default) lasts. While traffic is light each poll
 * goes out at once; under sustained traffic polls are spaced so a poll brings a batch of the
 * events that arrived meanwhile, instead of one poll per event running the budget dry.
 *
 * A token bucket: tokens accrue at the hourly budget less a headroom (or slower, where the minute's
 * budget is the tighter one), up to a burst. Any hour therefore holds at most `burst + rate × 1 h`
 * polls and any minute `burst + rate × 1 min`, each below its budget by the headroom left for
 * catch-up after a reconnect (whose first poll is free) and for queue deletions.
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

export class PollPacer {
  readonly #o: PollPacingOptions;
  readonly #headroom: number;
  #tokens: number | undefined;
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
    const { rate, burst } = this.#shape();
    const now = this.#o.clock.now();
    const tokens = Math.min(burst, (this.#tokens ?? burst) + (now - this.#at) * rate) - 1;
    this.#tokens = tokens;
    this.#at = now;
    let wait = tokens >= 0 ? 0 : Math.ceil(-tokens / rate);
    const server = this.#o.bucket.serverLeft(now);
    if (server && server.remaining < burst) {
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
    if (this.#tokens !== undefined && this.#tokens < 1) this.#tokens = 1;
  }

  snapshot(): PacingSnapshot {
    const { rate } = this.#shape();
    return {
      spacingMs: this.#spacingMs,
      steadySpacingMs: this.#o.bucket.enforced ? Math.round(1 / rate) : 0,
      polls: this.#polls,
      held: this.#held,
    };
  }

  /**
   * Tokens per ms and the burst, from the budget as best known now. The hour's rate leaves the
   * headroom unused; half the headroom goes to bursts, within half a minute's budget. The rate is
   * also held to what the minute allows after a burst: without that, an account whose hourly limit
   * is raised above sixty minutes' worth would fill the sliding minute and then stall until its
   * first call left the window, instead of spacing its polls.
   */
  #shape(): { rate: number; burst: number } {
    const { perHour, perMinute } = this.#o.bucket.limits;
    const burst = Math.max(1, Math.min((perHour * this.#headroom) / 2, perMinute / 2));
    const hourly = (perHour * (1 - this.#headroom)) / HOUR;
    const minutely = Math.max(perMinute * (1 - this.#headroom) - burst, 1) / MINUTE;
    return { rate: Math.min(hourly, minutely), burst };
  }
}
