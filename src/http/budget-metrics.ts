/**
 * The budget metrics at `/metrics`: each bot's calls, calls left and 429s per budget (event queue,
 * other), and how its polls are spaced, read from the bots at every scrape.
 */
import type { Counter, Gauge, Registry } from "prom-client";
import type { BucketSnapshot } from "../api/rate-budget.ts";
import type { PacingSnapshot } from "../events/poll-pacing.ts";

/** A bot's call budgets and poll pacing, read at every scrape. */
export interface BudgetSource {
  bot: string;
  buckets: readonly BucketSnapshot[];
  pacing: PacingSnapshot | undefined;
}

/** Register the budget metrics on `registry`; `source` is read once per scrape. */
export function registerBudgetMetrics(
  prom: typeof import("prom-client"),
  registry: Registry,
  source: () => readonly BudgetSource[],
): void {
  // One read serves every metric of a scrape; dropped once the scrape's turn is over.
  let cached: readonly BudgetSource[] | undefined;
  const read = () => {
    if (!cached) {
      cached = source();
      setImmediate(() => {
        cached = undefined;
      });
    }
    return cached;
  };
  const registers = [registry];
  const metric = <K extends string>(
    kind: "Counter" | "Gauge",
    name: string,
    help: string,
    labelNames: readonly K[],
    fill: (set: (labels: Record<K, string>, value: number) => void, s: BudgetSource) => void,
  ) => {
    const m: Counter<K> | Gauge<K> = new prom[kind]<K>({
      name,
      help,
      labelNames,
      registers,
      collect() {
        m.reset();
        for (const s of read()) fill((labels, value) => m.inc(labels, value), s);
      },
    });
  };
  const perBucket =
    (pick: (b: BucketSnapshot) => number) =>
    (set: (l: Record<"bot" | "bucket", string>, v: number) => void, s: BudgetSource) => {
      for (const b of s.buckets) set({ bot: s.bot, bucket: b.bucket }, pick(b));
    };
  metric(
    "Counter",
    "bothost_api_budget_calls_total",
    "Calls made per budget (events: GET and DELETE /events; other: every other call).",
    ["bot", "bucket"],
    perBucket((b) => b.calls),
  );
  metric(
    "Counter",
    "bothost_api_budget_rate_limited_total",
    "429 responses per budget.",
    ["bot", "bucket"],
    perBucket((b) => b.limited),
  );
  metric(
    "Gauge",
    "bothost_api_budget_used_hour",
    "Calls started in the last hour, per budget.",
    ["bot", "bucket"],
    perBucket((b) => b.usedHour),
  );
  metric(
    "Gauge",
    "bothost_api_budget_used_minute",
    "Calls started in the last minute, per budget.",
    ["bot", "bucket"],
    perBucket((b) => b.usedMinute),
  );
  metric(
    "Gauge",
    "bothost_api_budget_remaining_hour",
    "Calls left in the hourly window (the server's count when it reported fewer).",
    ["bot", "bucket"],
    perBucket((b) => b.remainingHour),
  );
  metric(
    "Gauge",
    "bothost_api_budget_limit_hour",
    "Calls allowed per hour: configured, or the server's X-RateLimit-Limit.",
    ["bot", "bucket"],
    perBucket((b) => b.perHour),
  );
  metric(
    "Gauge",
    "bothost_poll_spacing_seconds",
    "The wait before the latest GET /events (0 while traffic is light).",
    ["bot"],
    (set, s) => set({ bot: s.bot }, (s.pacing?.spacingMs ?? 0) / 1000),
  );
  metric(
    "Counter",
    "bothost_polls_held_total",
    "Polls held back to keep within the event-queue budget.",
    ["bot"],
    (set, s) => set({ bot: s.bot }, s.pacing?.held ?? 0),
  );
}
