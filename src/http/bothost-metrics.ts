/**
 * The daemon's metrics, by name, on one registry. Modules increment them through the small sinks
 * built here (a bot runtime's, a client's), so none of them depends on the registry itself.
 */
import { type Counter, type Histogram, MetricsRegistry } from "./metrics-registry.ts";

/** The scheduler counters read for `/metrics` (see src/scheduler/scheduler-stats.ts). */
export interface SchedulerStatsLike {
  booked: number;
  delivered: number;
  failed: number;
  jobRuns: number;
  jobErrors: number;
  jobsSkipped: number;
}

/** What a bot runtime reports (see `BotRuntimeOptions.metrics`). */
export interface RuntimeMetricsSink {
  eventReceived(type: string): void;
  eventHandled(type: string, seconds: number): void;
  eventFailed(type: string, seconds: number): void;
  queueRegistered(reason: string): void;
  messagesReplayed(count: number): void;
  gap(): void;
}

/** A bot's series of one metric by event type, each bound on first use. */
function perType<T>(bot: string, bind: (labels: { bot: string; type: string }) => T): (type: string) => T {
  const byType = new Map<string, T>();
  return (type) => {
    let series = byType.get(type);
    if (series === undefined) {
      series = bind({ bot, type });
      byType.set(type, series);
    }
    return series;
  };
}

/** What a client reports (see `ClientCommonOptions.onResponse` and `onRateLimitWait`). */
export interface ApiMetricsSink {
  onResponse(info: { endpoint: string; status: number; ms: number }): void;
  onRateLimitWait(info: { endpoint: string; ms: number }): void;
}

/**
 * Every metric bothost exposes at `/metrics`. Create one per daemon; other modules (the scheduler,
 * say) add theirs with `metrics.registry.counter(…)`.
 *
 * @example
 * ```ts
 * const metrics = new BothostMetrics();
 * metrics.announcements.inc({ bot: "standup", outcome: "booked" });
 * ```
 */
export class BothostMetrics {
  readonly registry: MetricsRegistry;
  readonly eventsReceived: Counter;
  readonly eventsHandled: Counter;
  readonly eventsFailed: Counter;
  readonly handlerDuration: Histogram;
  readonly queueRegistrations: Counter;
  readonly replayedMessages: Counter;
  readonly gaps: Counter;
  readonly apiCalls: Counter;
  readonly rateLimitWaits: Counter;
  readonly rateLimitWaitSeconds: Counter;
  /** Recurring announcements, by outcome: booked, delivered, failed (the scheduler increments it). */
  readonly announcements: Counter;
  readonly webhookRequests: Counter;
  /** Local cron job runs by outcome: run, error, skipped (read from the schedulers' stats). */
  readonly cronJobs: Counter;

  constructor(registry = new MetricsRegistry()) {
    const r = registry;
    this.registry = r;
    this.eventsReceived = r.counter(
      "bothost_events_received_total",
      "Events that reached a bot (queue, replay or outgoing webhook), duplicates included.",
      ["bot", "type"],
    );
    this.eventsHandled = r.counter(
      "bothost_events_handled_total",
      "Events whose handlers finished without an error.",
      ["bot", "type"],
    );
    this.eventsFailed = r.counter("bothost_events_failed_total", "Events whose handlers threw.", [
      "bot",
      "type",
    ]);
    this.handlerDuration = r.histogram(
      "bothost_handler_duration_seconds",
      "Time from the start of an event's handlers to their end.",
      ["bot", "type"],
    );
    this.queueRegistrations = r.counter(
      "bothost_queue_registrations_total",
      "Event queues registered, by reason (start, expired, …).",
      ["bot", "reason"],
    );
    this.replayedMessages = r.counter(
      "bothost_replayed_messages_total",
      "Messages fetched and handled after a new queue (missed while none listened).",
      ["bot"],
    );
    this.gaps = r.counter(
      "bothost_gaps_total",
      "Times a bot may have missed events that cannot be fetched again.",
      ["bot"],
    );
    this.apiCalls = r.counter(
      "bothost_api_calls_total",
      "Calls to the chat server by endpoint and HTTP status (0: no response).",
      ["bot", "endpoint", "status"],
    );
    this.rateLimitWaits = r.counter(
      "bothost_rate_limit_waits_total",
      "Times a call waited for a rate limit (the client's own, or the server's 429).",
      ["bot"],
    );
    this.rateLimitWaitSeconds = r.counter(
      "bothost_rate_limit_wait_seconds_total",
      "Time calls spent waiting for a rate limit.",
      ["bot"],
    );
    this.announcements = r.counter(
      "bothost_announcements_total",
      "Recurring announcement occurrences by outcome: booked, delivered or failed.",
      ["bot", "outcome"],
    );
    this.webhookRequests = r.counter(
      "bothost_webhook_requests_total",
      "HTTP requests to webhook routes by route pattern and response status.",
      ["route", "status"],
    );
    this.cronJobs = r.counter(
      "bothost_cron_jobs_total",
      "Local cron job occurrences by outcome: run, error (the handler threw) or skipped.",
      ["bot", "outcome"],
    );
  }

  /**
   * Read the announcement and cron counters from each bot's scheduler stats at every scrape
   * (the scheduler keeps them; nothing else needs to increment them).
   */
  readSchedulerStats(source: () => { bot: string; stats: SchedulerStatsLike | undefined }[]): void {
    const read = () => {
      for (const { bot, stats } of source()) {
        if (!stats) continue;
        this.announcements.setTotal({ bot, outcome: "booked" }, stats.booked);
        this.announcements.setTotal({ bot, outcome: "delivered" }, stats.delivered);
        this.announcements.setTotal({ bot, outcome: "failed" }, stats.failed);
        this.cronJobs.setTotal({ bot, outcome: "run" }, stats.jobRuns);
        this.cronJobs.setTotal({ bot, outcome: "error" }, stats.jobErrors);
        this.cronJobs.setTotal({ bot, outcome: "skipped" }, stats.jobsSkipped);
      }
    };
    this.announcements.collect = read;
    this.cronJobs.collect = read;
  }

  /** A bot runtime's sink, bound to the bot's name. */
  runtimeSink(bot: string): RuntimeMetricsSink {
    // Each event counts into series of its bot and type: bound once per type, not looked up
    // (labels joined into a key) for every event. Bound on first use, so /metrics lists only
    // the series that happened.
    const received = perType(bot, (l) => this.eventsReceived.bind(l));
    const handled = perType(bot, (l) => this.eventsHandled.bind(l));
    const failed = perType(bot, (l) => this.eventsFailed.bind(l));
    const duration = perType(bot, (l) => this.handlerDuration.bind(l));
    return {
      eventReceived: (type) => received(type).inc(),
      eventHandled: (type, seconds) => {
        handled(type).inc();
        duration(type).observe(seconds);
      },
      eventFailed: (type, seconds) => {
        failed(type).inc();
        duration(type).observe(seconds);
      },
      queueRegistered: (reason) => this.queueRegistrations.inc({ bot, reason }),
      messagesReplayed: (count) => this.replayedMessages.inc({ bot }, count),
      gap: () => this.gaps.inc({ bot }),
    };
  }

  /** A client's sink, bound to the bot's name. */
  apiSink(bot: string): ApiMetricsSink {
    return {
      onResponse: ({ endpoint, status }) =>
        this.apiCalls.inc({ bot, endpoint: endpointPattern(endpoint), status }),
      onRateLimitWait: ({ ms }) => {
        this.rateLimitWaits.inc({ bot });
        this.rateLimitWaitSeconds.inc({ bot }, ms / 1000);
      },
    };
  }
}

/** "GET /messages/42/reactions" → "GET /messages/{id}/reactions": one series per endpoint, not per id. */
export function endpointPattern(endpoint: string): string {
  return endpoint
    .split("/")
    .map((seg) => (/^\d+$/.test(seg) ? "{id}" : seg.includes("@") || seg.includes("%40") ? "{email}" : seg))
    .join("/");
}
