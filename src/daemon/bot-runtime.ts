/**
 * One bot's lifecycle: set up its module, start its source (the event queue, or outgoing
 * webhooks), stop it within a deadline, and report its status. Events go from the source to the
 * bot's dispatch pipeline (`pipeline/dispatcher.ts`), which this only creates and drains.
 */
import type { Logger } from "pino";
import type { CaptureLog } from "../api/capture.ts";
import type { Client } from "../api/create-client.ts";
import { type BotHandle, createBotHandle } from "../bot/bot-handle.ts";
import type { BotDefinition } from "../bot/define-bot.ts";
import type { BotConfig } from "../config/schema.ts";
import { BotServices } from "../effects/bot-services.ts";
import { EffectRecords } from "../effects/effect-records.ts";
import { DeadLetterSource, type RetryRequests } from "../events/dead-letter-source.ts";
import { QueueSource } from "../events/queue-source.ts";
import type { RuntimeMetricsSink } from "../http/bothost-metrics.ts";
import type { ContextDeps } from "../pipeline/context.ts";
import { Dispatcher } from "../pipeline/dispatcher.ts";
import type { RetryPolicy } from "../pipeline/handler-failures.ts";
import type { DispatchStats, ReplyFn, RunHandler } from "../pipeline/incoming.ts";
import { BotScheduler } from "../scheduler/bot-scheduler.ts";
import type { DeadLetters } from "../state/dead-letters.ts";
import { KV } from "../state/kv.ts";
import { MemoryStore } from "../state/memory-store.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import { startWebhookMode } from "../webhook/webhook-mode.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { Narrow } from "../wire/records.ts";
import type { RegisterResponse } from "../wire/responses.ts";

/** How long effect records are kept: past retries and a restart (a dead letter carries its own). */
const EFFECT_RECORDS_TTL_MS = 6 * 3_600_000;

/** What one bot's runtime is built from (the daemon fills it from the bot's config). */
export interface BotRuntimeOptions {
  name: string;
  definition: BotDefinition<never, never>;
  settings: unknown;
  client: Client;
  /** The root store; the bot gets `<name>/kv` for ctx.state and `<name>/runtime` for the ledger. */
  store: StateStore;
  /** Make the store's writes durable against a machine crash (coalesced by the caller). */
  flush(): Promise<void>;
  /** Make the store's writes survive a crash of this process (cheaper than `flush`); default `flush`. */
  commit?(): Promise<void>;
  /** The store's synchronous commit, where it has one (a solo daemon's FileStore): see LedgerCommits. */
  syncCommit?: { ready(): boolean; commit(): boolean };
  log: Logger;
  events?: readonly string[];
  narrow?: Narrow;
  allPublicStreams?: boolean;
  ownMessages: boolean;
  concurrency: number;
  handlerTimeoutMs: number;
  replay: { maxMessages: number; maxAgeMs: number };
  /** Content over max_message_length: `split` into several messages (default) or `reject`. */
  longMessages?: "split" | "reject";
  longpollMarginMs?: number;
  backoff?: { initialMs?: number; maxMs?: number };
  /** The clock of the bot's scheduler; default real. */
  clock?: Clock;
  /**
   * `"webhook"`: messages arrive by outgoing-webhook POSTs (`deliver`); no event queue is kept.
   * `"backtest"`: no queue, no jobs, no onStart: history is handed in by `deliver` (backtest.ts).
   */
  mode?: "queue" | "webhook" | "backtest";
  /** Counts events, handler durations, registrations, replays and gaps. */
  metrics?: RuntimeMetricsSink;
  /** How a handler that throws is run again (config `retries`); default: never. */
  retries?: RetryPolicy;
  /** `dry_run: true`: the writes captured (report claims then stay in memory, so they are not kept). */
  captured?: CaptureLog;
  /** Where events whose every attempt failed are kept, and replayed from (`bothost failed retry`). */
  letters?: DeadLetters;
  /** Where the bot hears of later retry requests (the daemon's one watcher); default: at start only. */
  retryRequests?: RetryRequests;
  /**
   * Run at each start before the bot's state is read (`server-check.ts`): rejects when the state
   * belongs to another server; resolves the registration it made, if any.
   */
  checkServer?(signal: AbortSignal): Promise<RegisterResponse | undefined>;
}

/** A bot's config entry as the options of its runtime (the parts the YAML decides). */
export function optionsFromConfig(c: BotConfig) {
  return {
    ...(c.events ? { events: c.events } : {}),
    ...(c.narrow ? { narrow: c.narrow.map(([op, operand]) => [op, operand] as [string, string]) } : {}),
    ...(c.all_public_streams !== undefined ? { allPublicStreams: c.all_public_streams } : {}),
    ownMessages: c.own_messages,
    concurrency: c.concurrency,
    handlerTimeoutMs: c.handler_timeout,
    replay: { maxMessages: c.replay.max_messages, maxAgeMs: c.replay.max_age },
    longMessages: c.long_messages,
    ...(c.outgoing_webhook ? { mode: "webhook" as const } : {}),
    retries: {
      attempts: c.retries.attempts,
      backoffMs: c.retries.backoff,
      maxBackoffMs: c.retries.max_backoff,
    },
  };
}

export class BotRuntime {
  readonly name: string;
  readonly #o: BotRuntimeOptions;
  readonly #kv: KV;
  readonly #services: BotServices;
  readonly #dispatcher: Dispatcher;
  #handle: BotHandle<unknown> | undefined;
  #eventTypes: string[] | null = null;
  #source: QueueSource | undefined;
  #webhookReady = false;
  /** The start's server check is registering to read the server's identity. */
  #checking = false;
  #stopping = new AbortController();
  /** True while another instance runs this bot (cluster mode); `status.state` is then "standby". */
  standby = false;
  readonly stats: DispatchStats;
  /** Where a handler that is not an event's runs (cron jobs, inbound webhooks). */
  readonly runHandler: RunHandler;
  /** Recurring announcements, cron jobs and `bot.schedule`; `scheduler.stats` for metrics. */
  readonly scheduler: BotScheduler;
  /** `dry_run: true`: the writes captured instead of made. */
  readonly captured: CaptureLog | undefined;

  constructor(options: BotRuntimeOptions) {
    this.name = options.name;
    this.#o = options;
    const store = options.store.namespace(options.name);
    this.#kv = new KV(store.namespace("kv"));
    this.captured = options.captured;
    if (this.captured) this.captured.channelName = (id) => this.#services.channels.nameOf(id);
    this.#services = new BotServices({
      name: options.name,
      client: options.client,
      store: options.captured ? new MemoryStore() : options.store,
      log: options.log,
      receives: (type) => this.#receives(type),
      ...(options.metrics ? { onEcho: () => options.metrics!.sendVerified("echo") } : {}),
      ...(options.longMessages ? { longMessages: options.longMessages } : {}),
    });
    this.#dispatcher = new Dispatcher({
      ...options,
      state: this.#kv,
      ledgerStore: store.namespace("runtime"),
      services: this.#services,
      effects: new EffectRecords(store.namespace("effects"), {
        ttlMs: EFFECT_RECORDS_TTL_MS,
        log: options.log,
        commit: options.commit ?? options.flush,
        ...(options.metrics ? { onVerify: (outcome) => options.metrics!.sendVerified(outcome) } : {}),
      }),
    });
    this.stats = this.#dispatcher.stats;
    this.runHandler = this.#dispatcher.runHandler;
    this.scheduler = new BotScheduler({
      client: options.client,
      store,
      flush: options.flush,
      log: options.log,
      ...(options.clock ? { clock: options.clock } : {}),
      contextDeps: () => this.contextDeps(),
      runHandler: this.runHandler,
      runJob: this.#dispatcher.runJob,
    });
  }

  /** Run the module's `setup` and work out the event types to subscribe to. */
  async setup(): Promise<void> {
    const handle = createBotHandle<unknown>({
      name: this.name,
      log: this.#o.log,
      client: this.#o.client,
      state: this.#kv,
      schedule: this.scheduler.schedule,
    });
    await (this.#o.definition.setup as (bot: unknown, settings: unknown) => unknown)(
      handle.api,
      this.#o.settings,
    );
    this.#handle = handle;
    this.#dispatcher.composer = handle.composer;
    const declared = this.#o.events ?? this.#o.definition.events ?? [...handle.handledTypes];
    // Recurring announcements follow their bookings through scheduled_messages events.
    const types = handle.recurring.size > 0 ? [...declared, "scheduled_messages"] : declared;
    this.#eventTypes = types.includes("*") ? null : [...new Set(types)].filter((t) => t !== "gap");
  }

  /** Register the queue (replaying what was missed since the last run) and start polling. */
  async start(): Promise<void> {
    // Started again after stop() on a cluster failover; a stop() during start() ends it at the next step.
    if (this.#stopping.signal.aborted) this.#stopping = new AbortController();
    const signal = this.#stopping.signal;
    // Before setup too: its `bot.state` must not read what belongs to another server.
    this.#checking = this.#o.checkServer !== undefined;
    const registered = await this.#o.checkServer?.(signal).finally(() => {
      this.#checking = false;
    });
    if (signal.aborted) return;
    if (!this.#handle) await this.setup();
    if (!(await this.#dispatcher.openLedger(signal))) return;
    const o = this.#o;
    if (o.mode === "webhook" || o.mode === "backtest") {
      const started = await startWebhookMode({ ...o, dispatcher: this.#dispatcher, signal, registered });
      // A backtest needs the identity only: its events are history, its writes captured.
      if (!started || o.mode === "backtest") return;
      this.#webhookReady = true;
    } else {
      this.#source = new QueueSource({
        ...o,
        dispatcher: this.#dispatcher,
        eventTypes: this.#eventTypes,
        signal,
        lastContact: this.#source?.lastContact,
        onRegistered: (reason) => {
          // Events may have been lost with the old queue: check the bookings against the server.
          if (reason !== "start") this.scheduler.resync();
          this.#services.onRegistered(this.#dispatcher.server!, this.#dispatcher.self!);
          // The bot's sends echo only into a queue that receives its message events.
          this.#services.echo.queue = this.#receives("message")
            ? (this.#source?.consumer.queueId ?? undefined)
            : undefined;
        },
        onScheduledMessages: (event) => this.scheduler.onEvent(event),
      });
      await this.#source.consumer.start();
      if (signal.aborted) return;
    }
    this.#dispatcher.resume();
    this.#dispatcher.runOnStart(this.#handle!.startHandlers);
    // A webhook-mode bot gets no scheduled_messages events: the scheduler finds its bookings
    // sent by its own check a few minutes after each occurrence.
    await this.scheduler.start(this.declarations);
    // After the scheduler: a cron job's dead letter is replayed by its job.
    if (o.letters && !signal.aborted) {
      await new DeadLetterSource({
        letters: o.letters,
        dispatcher: this.#dispatcher,
        replayJob: (letter) => this.scheduler.replayJob(letter),
        log: o.log,
        signal,
        ...(o.retryRequests ? { requests: o.retryRequests } : {}),
      }).start();
    }
  }

  /** Stop polling, let handlers finish up to `deadlineMs`, delete the queue. */
  async stop(deadlineMs: number): Promise<{ abandoned: number }> {
    this.#stopping.abort(new Error("bot stopping"));
    this.#webhookReady = false;
    const sourceStopped = this.#source?.consumer.stop();
    const abandoned = await this.#dispatcher.drain(deadlineMs);
    await sourceStopped;
    await this.scheduler.stop(deadlineMs);
    this.#services.dispose();
    await this.#o.flush();
    return { abandoned };
  }

  get status() {
    const c = this.#source?.consumer;
    const d = this.#dispatcher;
    return {
      name: this.name,
      state: this.standby
        ? "standby"
        : this.#checking
          ? "registering"
          : (c?.state ?? (this.#webhookReady ? "webhook" : "idle")),
      queueId: c?.queueId ?? null,
      queueRegisteredAt: c?.queueId ? c.registeredAt : undefined,
      lastEventAt: d.lastEventAt,
      registrations: c?.registrations ?? 0,
      lastHeartbeatAt: c?.lastHeartbeatAt,
      lastContactAt: c?.lastContactAt,
      longpollMs: c?.longpollMs,
      userId: d.self?.userId,
      inFlight: d.inFlight,
      cursor: d.ledger?.cursor,
      server: d.server,
      ...this.stats,
    };
  }

  #receives(type: string): boolean {
    return this.#eventTypes === null || this.#eventTypes.includes(type);
  }

  /**
   * Hand an event from another transport (an outgoing-webhook POST) to the bot: the same dedup,
   * ordering and handlers as the queue. `reply` replaces `ctx.reply` (to answer in the HTTP
   * response). Resolves true when the handlers finished; false for a duplicate or own message.
   */
  deliver(event: ServerEvent, options: { reply?: ReplyFn } = {}): Promise<boolean> {
    return new Promise((resolve) => {
      const incoming = { event, replayed: false, issue: undefined, reply: options.reply };
      if (!this.#dispatcher.accept(incoming, () => resolve(true))) resolve(false);
    });
  }

  /** What `bot.recurring`, `bot.cron` and `bot.webhook` declared in `setup`. */
  get declarations(): Pick<BotHandle<unknown>, "recurring" | "cronJobs" | "webhooks"> {
    const h = this.#handle;
    if (!h) throw new Error(`bot ${this.name}: setup() has not run`);
    return { recurring: h.recurring, cronJobs: h.cronJobs, webhooks: h.webhooks };
  }

  /** What a context of this bot is built from (complete once the bot has registered). */
  contextDeps(): ContextDeps<unknown> {
    return this.#dispatcher.contextDeps();
  }
}
