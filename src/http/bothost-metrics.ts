/**
 * The daemon's metrics: Node's process metrics plus bothost's own. Modules report through small
 * sinks bound once per bot and event type (an event costs a few increments, no label hashing), so
 * none depends on prom-client, which is loaded only when a daemon serves `/metrics`.
 */
import { createRequire } from "node:module";
import type { Counter, Gauge } from "prom-client";
import type { RegisterReason } from "../events/queue-consumer.ts";
import { type BudgetSource, registerBudgetMetrics } from "./budget-metrics.ts";

type PromClient = typeof import("prom-client");
let promClient: PromClient | undefined;
const loadPromClient = (): PromClient =>
  (promClient ??= createRequire(import.meta.url)("prom-client") as PromClient);

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
  /** The type's series, at 0 before its first count (a cron job's at its first run). */
  typeSeen(type: string): void;
  eventHandled(type: string, seconds: number): void;
  /** One run of a handler threw (each attempt counts). */
  eventFailed(type: string, seconds: number): void;
  /** An event failed for good: kept as a dead letter, or it threw NoRetry with deadLetter: false. */
  eventFailedForGood(type: string): void;
  /** One run failed on a state store outage, not in the handler (each attempt counts). */
  storeOutage(type: string, seconds: number): void;
  /** A failed handler is run again after a pause. */
  handlerRetried(type: string): void;
  /** An event became a dead letter (its last attempt failed, or it threw NoRetry). */
  deadLettered(type: string): void;
  /** An ambiguous send was checked: its own event came (`echo`), a read-back `found` it, or not. */
  sendVerified(outcome: "echo" | "found" | "absent" | "unknown"): void;
  queueRegistered(reason: string): void;
  /** The queue waits for a server's 429 the client handed on (counted as the client's waits). */
  rateLimitWait(ms: number): void;
  messagesReplayed(count: number): void;
  gap(): void;
  /** Webhook mode: a delivery dropped as older than the last messages handled (maybe never handled). */
  lateDelivery(): void;
}

/** What a client reports (see `ClientCommonOptions.onResponse` and `onRateLimitWait`). */
export interface ApiMetricsSink {
  onResponse(info: { endpoint: string; status: number; ms: number }): void;
  onRateLimitWait(info: { endpoint: string; ms: number }): void;
}

/** Every metric bothost exposes at `/metrics`. Create one per daemon. */
export class BothostMetrics {
  readonly #prom = loadPromClient();
  readonly registry = new this.#prom.Registry();
  /** Counters with the same labels, from a table of their names and help texts. */
  readonly #counters = <K extends string, N extends string>(
    labelNames: readonly K[],
    help: Record<N, string>,
  ) =>
    Object.fromEntries(
      Object.entries<string>(help).map(([name, text]) => [
        name,
        new this.#prom.Counter<K>({ name, help: text, labelNames, registers: [this.registry] }),
      ]),
    ) as Record<N, Counter<K>>;

  readonly #c = {
    ...this.#counters(["bot", "type"], {
      bothost_events_received_total:
        "Events that reached a bot (queue, catch-up, replay or outgoing webhook), duplicates included.",
      bothost_events_handled_total: "Events whose handlers finished without an error.",
      bothost_events_failed_total: "Handler runs that threw (each attempt of a retried event counts).",
      bothost_events_failed_for_good_total:
        "Events whose handling failed for good, each once: kept as dead letters, or NoRetry with deadLetter: false.",
      bothost_events_store_outage_total:
        "Handler runs that failed on a state store outage, not in the handler (each attempt counts).",
      bothost_handler_retries_total: "Handler runs started again after a failure.",
      bothost_dead_letters_total: "Events kept as dead letters after their handler failed every attempt.",
    }),
    ...this.#counters(["bot", "outcome"], {
      bothost_send_verifications_total:
        "Sends whose outcome was unknown, checked: echo (its own message event came), found (read back) or absent.",
      bothost_announcements_total:
        "Recurring announcement occurrences by outcome: booked, delivered or failed.",
      bothost_cron_jobs_total:
        "Local cron job occurrences by outcome: run, error (the handler threw) or skipped.",
    }),
    ...this.#counters(["bot", "reason"], {
      bothost_queue_registrations_total:
        "Event queues registered, by reason: start, queue_expired, ack_rejected, watchdog or event_types.",
    }),
    ...this.#counters(["bot"], {
      bothost_replayed_messages_total:
        "Messages fetched and handled after a new queue (missed while none listened).",
      bothost_gaps_total: "Times a bot may have missed events that cannot be fetched again.",
      bothost_late_deliveries_total:
        "Outgoing-webhook deliveries dropped unhandled: older than the last 1000 messages handled, maybe never handled.",
      bothost_rate_limit_waits_total:
        "Times a call waited for a rate limit (the client's own, or the server's 429).",
      bothost_rate_limit_wait_seconds_total: "Time calls spent waiting for a rate limit.",
    }),
    ...this.#counters(["bot", "endpoint", "status"], {
      bothost_api_calls_total: "Calls to the chat server by endpoint and HTTP status (0: no response).",
    }),
    ...this.#counters(["route", "status"], {
      bothost_webhook_requests_total: "HTTP requests to webhook routes by route pattern and response status.",
    }),
  };
  /** Counted by the access log (see src/log/access-log.ts). */
  readonly webhookRequests = this.#c.bothost_webhook_requests_total;
  readonly #handlerDuration = new this.#prom.Histogram<"bot" | "type">({
    name: "bothost_handler_duration_seconds",
    help: "Time from the start of a run of an event's handlers to its end, each attempt counted.",
    labelNames: ["bot", "type"],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly #redisFailovers = new this.#prom.Counter<"connection">({
    name: "bothost_redis_failovers_total",
    help: "Times a Redis connection (state or leases) found a new primary: a Sentinel failover.",
    labelNames: ["connection"],
    registers: [this.registry],
  });
  readonly #replicaWaits = new this.#prom.Histogram<"connection" | "outcome">({
    name: "bothost_redis_replica_wait_seconds",
    help: "Writes that waited for the replicas to confirm them (WAIT), by outcome: confirmed or unconfirmed.",
    labelNames: ["connection", "outcome"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  constructor() {
    this.#prom.collectDefaultMetrics({ register: this.registry });
  }

  /**
   * A sink for one Redis connection (`state` or `leases`): the failovers it saw, and how long its
   * writes waited for the replicas (outcome `confirmed`, or `unconfirmed`: not all had it in time).
   */
  redisSink(connection: string): { failover(): void; waited(seconds: number, confirmed: boolean): void } {
    const failovers = this.#redisFailovers.labels({ connection });
    // At 0 from the start: a series that first appears at 1 shows no increase() to an alert.
    failovers.inc(0);
    const waits = this.#replicaWaits;
    return {
      failover: () => failovers.inc(),
      waited: (seconds, confirmed) =>
        waits.observe({ connection, outcome: confirmed ? "confirmed" : "unconfirmed" }, seconds),
    };
  }

  /** Read each bot's budgets (calls, calls left, 429s per bucket) and poll spacing at every scrape. */
  readBudgets(source: () => readonly BudgetSource[]): void {
    registerBudgetMetrics(this.#prom, this.registry, source);
  }

  /** Read each bot's open dialogs (`ctx.prompt`) at every scrape. */
  readDialogs(source: () => readonly { bot: string; waiting: number }[]): void {
    this.#perBot(
      "bothost_dialogs_waiting",
      "Open dialogs (ctx.prompt) per bot: waiting for an answer or their deadline, or being handled.",
      () => source().map(({ bot, waiting }) => [bot, waiting]),
    );
  }

  /** Read at every scrape whether each bot is ready, as `/readyz` says it (1 or 0). */
  readReadiness(source: () => readonly { bot: string; ready: boolean }[]): void {
    this.#perBot(
      "bothost_bot_ready",
      "1 while the bot is ready as /readyz says it (it receives events and can record what it handles), else 0.",
      () => source().map((b) => [b.bot, b.ready ? 1 : 0]),
    );
  }

  /** A gauge per bot, its values read at every scrape. */
  #perBot(name: string, help: string, values: () => [bot: string, value: number][]): void {
    const gauge: Gauge<"bot"> = new this.#prom.Gauge({
      name,
      help,
      labelNames: ["bot"],
      registers: [this.registry],
      collect() {
        gauge.reset();
        for (const [bot, value] of values()) gauge.set({ bot }, value);
      },
    });
  }

  /**
   * Read at every scrape whether the state store fails each bot's writes now (a gauge, 1 or 0),
   * how many of its writes the store's outage failed, by code, and how many of its events
   * outlasted every attempt on the outage and waited for the store (counters).
   */
  readStoreHealth(
    source: () => readonly {
      bot: string;
      failing: boolean;
      failures: ReadonlyMap<string, number>;
      waits: number;
    }[],
  ): void {
    this.#perBot(
      "bothost_state_store_failing",
      "1 while the state store fails the bot's writes (a Redis outage, the embedded store's disk full), else 0.",
      () => source().map((b) => [b.bot, b.failing ? 1 : 0]),
    );
    const failures: Counter<"bot" | "code"> = new this.#prom.Counter({
      name: "bothost_state_store_write_failures_total",
      help: "The bot's writes the state store's outage failed, by code (STATE_UNAVAILABLE, STATE_IO); each try counts.",
      labelNames: ["bot", "code"],
      registers: [this.registry],
      collect() {
        failures.reset();
        for (const b of source()) {
          // At 0 before the first failure, so that an alert on its increase() sees that one.
          for (const code of STORE_FAILURE_CODES) failures.inc({ bot: b.bot, code }, 0);
          for (const [code, n] of b.failures) failures.inc({ bot: b.bot, code }, n);
        }
      },
    });
    const waits: Counter<"bot"> = new this.#prom.Counter({
      name: "bothost_events_store_waits_total",
      help: "The bot's events (and cron occurrences) whose every attempt failed, the last on the state store's outage, that waited for the store.",
      labelNames: ["bot"],
      registers: [this.registry],
      collect() {
        waits.reset();
        for (const b of source()) waits.inc({ bot: b.bot }, b.waits);
      },
    });
  }

  /** Read the announcement and cron counters from each bot's scheduler stats at every scrape. */
  readSchedulerStats(source: () => { bot: string; stats: SchedulerStatsLike | undefined }[]): void {
    const totals = (
      counter: Counter<"bot" | "outcome">,
      pick: (s: SchedulerStatsLike) => Record<string, number>,
    ) => {
      const collect = () => {
        counter.reset();
        for (const { bot, stats } of source()) {
          if (!stats) continue;
          for (const [outcome, n] of Object.entries(pick(stats))) counter.inc({ bot, outcome }, n);
        }
      };
      (counter as unknown as { collect: () => void }).collect = collect;
    };
    const c = this.#c;
    totals(c.bothost_announcements_total, (s) => ({
      booked: s.booked,
      delivered: s.delivered,
      failed: s.failed,
    }));
    totals(c.bothost_cron_jobs_total, (s) => ({
      run: s.jobRuns,
      error: s.jobErrors,
      skipped: s.jobsSkipped,
    }));
  }

  runtimeSink(bot: string): RuntimeMetricsSink {
    const c = this.#c;
    const perType = bound((type: string) => {
      const m = {
        received: c.bothost_events_received_total.labels({ bot, type }),
        handled: c.bothost_events_handled_total.labels({ bot, type }),
        failed: c.bothost_events_failed_total.labels({ bot, type }),
        forGood: c.bothost_events_failed_for_good_total.labels({ bot, type }),
        outage: c.bothost_events_store_outage_total.labels({ bot, type }),
        retried: c.bothost_handler_retries_total.labels({ bot, type }),
        dead: c.bothost_dead_letters_total.labels({ bot, type }),
        duration: this.#handlerDuration.labels({ bot, type }),
      };
      // A type's counters appear together, at 0: a series that first appears at 1 shows no
      // increase() to an alert, so the first dead letter (or failure) of a type would go unseen.
      for (const counter of [m.received, m.handled, m.failed, m.forGood, m.outage, m.retried, m.dead])
        counter.inc(0);
      return m;
    });
    const registrations = bound((reason: string) =>
      c.bothost_queue_registrations_total.labels({ bot, reason }),
    );
    // Every reason at 0 from the start: the first watchdog or expiry would show no increase().
    for (const reason of REGISTER_REASONS) registrations(reason).inc(0);
    const verifications = bound((outcome: string) =>
      c.bothost_send_verifications_total.labels({ bot, outcome }),
    );
    const replayed = c.bothost_replayed_messages_total.labels({ bot });
    const gaps = c.bothost_gaps_total.labels({ bot });
    const late = c.bothost_late_deliveries_total.labels({ bot });
    const rateLimitWait = this.#rateLimitWaits(bot);
    // At 0 from the bot's start, for the same reason.
    for (const counter of [replayed, gaps, late]) counter.inc(0);
    for (const outcome of ["echo", "found", "absent"]) verifications(outcome).inc(0);
    return {
      eventReceived: (type) => perType(type).received.inc(),
      typeSeen: (type) => void perType(type),
      eventHandled: (type, seconds) => {
        const m = perType(type);
        m.handled.inc();
        m.duration.observe(seconds);
      },
      eventFailed: (type, seconds) => {
        const m = perType(type);
        m.failed.inc();
        m.duration.observe(seconds);
      },
      storeOutage: (type, seconds) => {
        const m = perType(type);
        m.outage.inc();
        m.duration.observe(seconds);
      },
      eventFailedForGood: (type) => perType(type).forGood.inc(),
      handlerRetried: (type) => perType(type).retried.inc(),
      deadLettered: (type) => perType(type).dead.inc(),
      sendVerified: (outcome) => verifications(outcome).inc(),
      queueRegistered: (reason) => registrations(reason).inc(),
      rateLimitWait,
      messagesReplayed: (count) => replayed.inc(count),
      gap: () => gaps.inc(),
      lateDelivery: () => late.inc(),
    };
  }

  /** Counts a bot's wait for a rate limit: the client's, or the queue's for a 429 handed on. */
  #rateLimitWaits(bot: string): (ms: number) => void {
    const waits = this.#c.bothost_rate_limit_waits_total.labels({ bot });
    const waited = this.#c.bothost_rate_limit_wait_seconds_total.labels({ bot });
    waits.inc(0);
    waited.inc(0);
    return (ms) => {
      waits.inc();
      waited.inc(ms / 1000);
    };
  }

  apiSink(bot: string): ApiMetricsSink {
    const c = this.#c;
    const calls = bound((key: string) => {
      const [endpoint, status] = key.split("\u0000") as [string, string];
      return c.bothost_api_calls_total.labels({ bot, endpoint, status });
    });
    const rateLimitWait = this.#rateLimitWaits(bot);
    return {
      // Keyed by the pattern, so ids in paths do not grow the children without bound.
      onResponse: ({ endpoint, status }) => calls(`${endpointPattern(endpoint)}\u0000${status}`).inc(),
      onRateLimitWait: ({ ms }) => rateLimitWait(ms),
    };
  }
}

/** Every reason a queue is registered for (a Record, so that a new reason must be added here). */
const REGISTER_REASONS = Object.keys({
  start: 0,
  queue_expired: 0,
  ack_rejected: 0,
  watchdog: 0,
  event_types: 0,
} satisfies Record<RegisterReason, 0>);

/** The codes of a state store's outage: Redis's, the embedded store's disk. */
const STORE_FAILURE_CODES = ["STATE_UNAVAILABLE", "STATE_IO"] as const;

/** `make` memoised per key: the label children of a metric, made on first use. */
function bound<T>(make: (key: string) => T): (key: string) => T {
  const made = new Map<string, T>();
  return (key) => made.get(key) ?? made.set(key, make(key)).get(key)!;
}

/** "GET /messages/42/reactions" → "GET /messages/{id}/reactions": one series per endpoint, not per id. */
export function endpointPattern(endpoint: string): string {
  return endpoint
    .split("/")
    .map((seg) => (/^\d+$/.test(seg) ? "{id}" : seg.includes("@") || seg.includes("%40") ? "{email}" : seg))
    .join("/");
}
