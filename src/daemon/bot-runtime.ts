import { type ServerInfo, serverInfoFrom } from "../api/server-info.ts";
import { type BotHandle, createBotHandle } from "../bot/bot-handle.ts";
import { BotServices } from "../effects/bot-services.ts";
import { catchUp, newestMessageId } from "../events/catch-up.ts";
import { queueApiFor } from "../events/queue-api.ts";
import { QueueConsumer, type RegisterReason } from "../events/queue-consumer.ts";
import { registerParams, replayMessageFormat } from "../events/register-params.ts";
import { type BotContext, type ContextDeps, createBaseContext, createContext } from "../pipeline/context.ts";
import { BOT_KEY, ConversationKeys } from "../pipeline/conversation-key.ts";
import { ConversationQueue, type TaskControl } from "../pipeline/conversation-queue.ts";
import { DeliveryLedger } from "../pipeline/delivery-ledger.ts";
import { isOwnMessage } from "../pipeline/is-own-message.ts";
import { BotScheduler } from "../scheduler/bot-scheduler.ts";
import { KV } from "../state/kv.ts";
import { registerOnce } from "../webhook/register-once.ts";
import type { ParsedEvent, ServerEvent } from "../wire/events.ts";
import type { Narrow } from "../wire/records.ts";
import type { RegisterResponse } from "../wire/responses.ts";
import type { BotRuntimeOptions } from "./bot-runtime-options.ts";

type ReplyFn = (content: string) => Promise<{ id: number }>;

/** The context options of nearly every event, made once. */
const LIVE = Object.freeze({ replayed: false });
const REPLAYED = Object.freeze({ replayed: true });
/** The run options of a live, well-formed event from the queue. */
const LIVE_RUN = Object.freeze({ replayed: false, issue: undefined, reply: undefined });

/** The completions of this turn are committed synchronously at its end (see #finishMessage). */
const IN_TURN = Symbol("in-turn commit");

/** How to run an event other than a live, well-formed one from the queue (see #accept). */
class RunOptions {
  constructor(
    readonly event: ServerEvent,
    readonly replayed: boolean,
    readonly issue: string | undefined,
    readonly reply: ReplyFn | undefined,
  ) {}
}

export type { GapEvent } from "../events/catch-up.ts";
export type { BotRuntimeOptions } from "./bot-runtime-options.ts";

export class BotRuntime {
  readonly name: string;
  readonly #o: BotRuntimeOptions;
  readonly #kv: KV;
  readonly #queue: ConversationQueue;
  readonly #keys = new ConversationKeys();
  /** ctx.snippets, ctx.users, ctx.typing, ctx.report and the limits of ctx.send. */
  readonly #services: BotServices;
  #handle: BotHandle<unknown> | undefined;
  #eventTypes: string[] | null = null;
  #ledger: DeliveryLedger | undefined;
  #consumer: QueueConsumer | undefined;
  #server: ServerInfo | undefined;
  #self: { userId: number; email: string } | undefined;
  #lastContactBeforeGap: number | undefined;
  /**
   * The ledger save shared by every completion of this turn (see #finishMessage): a promise the
   * conversation's next message waits for, or IN_TURN for a synchronous commit at the turn's end.
   */
  #commitRound: Promise<void> | typeof IN_TURN | undefined;
  /** What contexts are built from; rebuilt when the bot (re-)registers. */
  #deps: ContextDeps<unknown> | undefined;
  /** The newest message id seen just before the first-ever registration (the ledger's baseline). */
  #baselineCandidate: number | undefined;
  #webhookReady = false;
  #stopping = new AbortController();
  /** True while another instance runs this bot (cluster mode); `status.state` is then "standby". */
  standby = false;
  readonly stats = { received: 0, handled: 0, failed: 0, replayed: 0, duplicates: 0, gaps: 0 };
  /** Recurring announcements, cron jobs and `bot.schedule`; `scheduler.stats` for metrics. */
  readonly scheduler: BotScheduler;

  constructor(options: BotRuntimeOptions) {
    this.name = options.name;
    this.#o = options;
    this.#kv = new KV(options.store.namespace(options.name).namespace("kv"));
    this.scheduler = new BotScheduler({
      client: options.client,
      store: options.store.namespace(options.name),
      flush: options.flush,
      log: options.log,
      ...(options.clock ? { clock: options.clock } : {}),
      contextDeps: () => this.contextDeps(),
    });
    this.#services = new BotServices({
      name: options.name,
      client: options.client,
      store: options.store,
      log: options.log,
      receives: (type) => this.#eventTypes === null || this.#eventTypes.includes(type),
      ...(options.longMessages ? { longMessages: options.longMessages } : {}),
    });
    this.#queue = new ConversationQueue({
      concurrency: options.concurrency,
      handlerTimeoutMs: options.handlerTimeoutMs,
      log: options.log,
      onError: (err, key) => this.#o.log.error({ err, key }, "handler failed"),
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
    const declared = this.#o.events ?? this.#o.definition.events ?? [...handle.handledTypes];
    // Recurring announcements follow their bookings through scheduled_messages events.
    const types = handle.recurring.size > 0 ? [...declared, "scheduled_messages"] : declared;
    this.#eventTypes = types.includes("*") ? null : [...new Set(types)].filter((t) => t !== "gap");
  }

  /** Register the queue (replaying what was missed since the last run) and start polling. */
  async start(): Promise<void> {
    // A runtime can be started again after stop() (cluster failover brings a bot back). A stop()
    // during start() makes it give up at the next step.
    if (this.#stopping.signal.aborted) this.#stopping = new AbortController();
    const stopping = this.#stopping.signal;
    if (!this.#handle) await this.setup();
    const ledger = await DeliveryLedger.open(this.#o.store.namespace(this.name).namespace("runtime"));
    if (stopping.aborted) return;
    this.#ledger = ledger;
    if (this.#o.mode === "webhook") return this.#startWebhookMode();
    const client = this.#o.client;
    this.#consumer = new QueueConsumer({
      log: this.#o.log,
      longpollMarginMs: this.#o.longpollMarginMs,
      backoff: this.#o.backoff,
      api: queueApiFor(client, async (signal) => {
        // First start: note the newest message BEFORE the queue exists. Taken after, a message
        // sent in between would be both in the queue and at or below the baseline, and dropped.
        if (this.#ledger?.cursor === undefined && this.#wantsMessages()) {
          this.#baselineCandidate = await newestMessageId(client, this.#replayNarrow(), signal);
        }
        return client.events.register(
          registerParams({
            eventTypes: this.#eventTypes,
            narrow: this.#o.narrow,
            allPublicStreams: this.#o.allPublicStreams,
          }),
          { signal },
        );
      }),
      onRegistered: (reg, reason) => this.#onRegistered(reg, reason),
      onEvents: (batch) => this.#onEvents(batch),
      // Polling acknowledges the events before their handlers finish: harmless, because a new
      // queue (after a crash too) replays messages from the ledger's cursor, not from the queue.
      waitForCapacity: (signal) => this.#queue.onBelow(this.#o.maxInFlight ?? 256, signal),
      hasCapacity: () => this.#queue.inFlight < (this.#o.maxInFlight ?? 256),
    });
    await this.#consumer.start();
    if (stopping.aborted) return;
    this.#runStartHandlers();
    await this.scheduler.start(this.declarations);
  }

  /**
   * Webhook mode keeps no queue, but a handler still needs the bot's id and the server's limits:
   * register once (the same initial state a queue bot gets) and delete that queue at once.
   */
  async #startWebhookMode(): Promise<void> {
    const reg = await registerOnce(this.#o.client, this.#stopping.signal, {
      log: this.#o.log,
      ...(this.#o.backoff ? { backoff: this.#o.backoff } : {}),
    });
    if (this.#stopping.signal.aborted) return;
    this.#server = serverInfoFrom(reg);
    const me =
      reg.user_id !== undefined && reg.email !== undefined ? undefined : await this.#o.client.users.me();
    this.#self = me ? { userId: me.user_id, email: me.email } : { userId: reg.user_id!, email: reg.email! };
    this.#deps = undefined;
    this.#webhookReady = true;
    this.#runStartHandlers();
    this.#o.log.info({ featureLevel: reg.zulip_feature_level }, "ready for outgoing-webhook deliveries");
    // No queue, so no scheduled_messages events: bookings are found sent by the scheduler's own
    // check a few minutes after each occurrence.
    await this.scheduler.start(this.declarations);
  }

  /** Stop polling, let handlers finish up to `deadlineMs`, delete the queue. */
  async stop(deadlineMs: number): Promise<{ abandoned: number }> {
    this.#stopping.abort(new Error("bot stopping"));
    this.#webhookReady = false;
    const consumerStopped = this.#consumer?.stop();
    let abandoned = 0;
    const deadline = AbortSignal.timeout(deadlineMs);
    try {
      await this.#queue.onIdle(deadline);
    } catch {
      abandoned = this.#queue.inFlight;
      this.#queue.abortAll();
      this.#o.log.warn({ abandoned }, "shutdown deadline passed; handlers still running were aborted");
    }
    await consumerStopped;
    await this.scheduler.stop(deadlineMs);
    this.#services.dispose();
    await this.#o.flush();
    return { abandoned };
  }

  get status() {
    const c = this.#consumer;
    return {
      name: this.name,
      state: this.standby ? "standby" : (c?.state ?? (this.#webhookReady ? "webhook" : "idle")),
      queueId: c?.queueId ?? null,
      registrations: c?.registrations ?? 0,
      lastHeartbeatAt: c?.lastHeartbeatAt,
      lastContactAt: c?.lastContactAt,
      longpollMs: c?.longpollMs,
      userId: this.#self?.userId,
      inFlight: this.#queue.inFlight,
      cursor: this.#ledger?.cursor,
      server: this.#server,
      ...this.stats,
    };
  }

  get eventTypes(): readonly string[] | null {
    return this.#eventTypes;
  }

  async #onRegistered(reg: RegisterResponse, reason: RegisterReason): Promise<void> {
    // Events may have been lost with the old queue: check the bookings against the server.
    if (reason !== "start") this.scheduler.resync();
    this.#server = serverInfoFrom(reg);
    this.#o.metrics?.queueRegistered(reason);
    if (reg.user_id !== undefined && reg.email !== undefined) {
      this.#self = { userId: reg.user_id, email: reg.email };
    } else if (!this.#self) {
      const me = await this.#o.client.users.me();
      this.#self = { userId: me.user_id, email: me.email };
    }
    this.#deps = undefined;
    this.#services.onRegistered(this.#server, this.#self!);
    const ledger = this.#ledger!;
    const firstEver = ledger.cursor === undefined;
    const since = this.#lastContactBeforeGap;
    this.#lastContactBeforeGap = undefined;
    if (firstEver) {
      if (!this.#wantsMessages() || this.#baselineCandidate === undefined) return;
      // Nothing before the baseline is handled; what was sent between it and the registration
      // is replayed (and deduplicated against the queue).
      await ledger.baseline(this.#baselineCandidate);
      // Durable before any message is handled: without it, a restart took a new, later baseline
      // and skipped what the first run had not finished (found by test/e2e/shutdown.test.ts).
      await this.#o.flush();
    }
    const { replayed, skipped, gap } = await catchUp(
      {
        client: this.#o.client,
        ledger,
        narrow: this.#replayNarrow(),
        limits: this.#o.replay,
        format: replayMessageFormat,
        eventTypes: this.#eventTypes,
        reason,
        since,
        signal: this.#stopping.signal,
        accept: (message) =>
          this.#accept({ id: -1, type: "message", message, flags: message.flags ?? [] }, true),
      },
      firstEver,
    );
    this.stats.replayed += replayed;
    if (replayed > 0) this.#o.metrics?.messagesReplayed(replayed);
    // A first start missed nothing: no catch-up line, no gap.
    if (firstEver) return;
    this.#o.log.info({ reason, replayed, skipped }, "caught up after a new queue");
    if (gap) {
      this.stats.gaps++;
      this.#o.metrics?.gap();
      this.#dispatchNow(gap);
    }
  }

  #replayNarrow(): Narrow | undefined {
    return this.#o.narrow && this.#o.narrow.length > 0 ? this.#o.narrow : undefined;
  }

  #wantsMessages(): boolean {
    return this.#eventTypes === null || this.#eventTypes.includes("message");
  }

  async #onEvents(batch: ParsedEvent[]): Promise<void> {
    for (const parsed of batch) {
      const e = parsed.event;
      if (e.type === "restart") this.#o.log.info({ featureLevel: e.zulip_feature_level }, "server restarted");
      if (e.type === "scheduled_messages") this.scheduler.onEvent(e);
      this.#accept(e, false, parsed.known ? undefined : parsed.issue);
    }
    this.#lastContactBeforeGap = this.#consumer?.lastContactAt;
  }
  /**
   * Hand an event from another transport (an outgoing-webhook POST) to the bot: the same dedup,
   * ordering and handlers as the queue. `reply` replaces `ctx.reply` (to answer in the HTTP
   * response). Resolves true when the handlers finished; false for a duplicate or own message.
   */
  deliver(event: ServerEvent, options: { reply?: ReplyFn } = {}): Promise<boolean> {
    return new Promise((resolve) => {
      if (!this.#accept(event, false, undefined, options.reply, () => resolve(true))) resolve(false);
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
    // Cached: it was rebuilt for every event. Registration changes #self and #server: reset there.
    this.#deps ??= {
      bot: {
        name: this.name,
        userId: this.#self?.userId ?? -1,
        email: this.#self?.email ?? this.#o.client.email,
      },
      api: this.#o.client,
      state: this.#kv,
      log: this.#o.log,
      settings: this.#o.settings,
      server: this.#server!,
      channelName: (id) => this.#services.channels.nameOf(id),
      ...(this.#o.clock ? { clock: this.#o.clock } : {}),
      services: this.#services,
    };
    return this.#deps;
  }

  /**
   * The one entry point of events into the bot. False when dropped (a duplicate, or the bot's own
   * message); else true, and `onDone` is called once the handlers finished.
   */
  #accept(
    event: ServerEvent,
    replayed: boolean,
    issue?: string,
    reply?: ReplyFn,
    onDone?: () => void,
  ): boolean {
    // Caches first, so handlers see state that includes this event.
    if (issue === undefined) this.#services.observe(event);
    const ledger = this.#ledger!;
    this.stats.received++;
    this.#o.metrics?.eventReceived(event.type);
    const messageId = ledgerIdOf(event);
    if (messageId !== undefined) {
      if (ledger.isDuplicate(messageId)) {
        this.stats.duplicates++;
        return false;
      }
      ledger.begin(messageId);
      if (!this.#o.ownMessages && this.#self && isOwnMessage(event, this.#self.userId)) {
        void this.#finishMessage(messageId);
        return false;
      }
    }
    // An event that failed its schema may lack what its key is made of: it goes on the bot's key.
    const key = issue === undefined ? this.#keys.keyOf(event) : BOT_KEY;
    // The usual event (live, well-formed, replied to as usual) is its own task argument: no
    // closure and no options object per event.
    const arg =
      replayed || issue !== undefined || reply ? new RunOptions(event, replayed, issue, reply) : event;
    this.#queue.pushWith(key, this.#runTask, arg, onDone);
    return true;
  }

  readonly #runTask = (control: TaskControl, arg: ServerEvent | RunOptions): unknown =>
    arg instanceof RunOptions ? this.#run(arg.event, control, arg) : this.#run(arg, control, LIVE_RUN);

  /** `bot.onStart()` handlers, through the queue (handler timeout, shutdown waits for them). */
  #runStartHandlers(): void {
    for (const handler of this.#handle!.startHandlers) {
      this.#queue.push("bot", async (control) => {
        const ctx = createBaseContext(this.contextDeps(), control, { onStart: true });
        try {
          await handler(ctx);
        } catch (err) {
          ctx.log.error({ err }, "onStart handler failed");
        }
      });
    }
  }

  #dispatchNow(event: ServerEvent): void {
    this.#queue.pushWith("bot", this.#runTask, event);
  }

  /**
   * Handle one event: synchronously when every middleware and handler is synchronous (no
   * promise at all), else through the promise the composer returns.
   */
  #run(event: ServerEvent, control: TaskControl, o: RunOptions | typeof LIVE_RUN): unknown {
    // Only the queue's signal: it aborts on the handler timeout and at the shutdown deadline.
    // Aborting on stop() itself would cut a handler's reply short on every graceful shutdown.
    const extra = o.issue ? { replayed: o.replayed, eventIssue: o.issue } : o.replayed ? REPLAYED : LIVE;
    const ctx = createContext(this.contextDeps(), event, control, extra);
    if (o.reply) ctx.reply = o.reply;
    const started = this.#o.metrics ? performance.now() : 0;
    let pending: void | Promise<void>;
    try {
      pending = this.#handle!.composer.run(ctx);
    } catch (err) {
      this.#failed(ctx, err, started);
      return this.#done(event, control);
    }
    if (pending === undefined) {
      this.#handled(event, started);
      return this.#done(event, control);
    }
    return pending.then(
      () => {
        this.#handled(event, started);
        this.#done(event, control);
      },
      (err: unknown) => {
        this.#failed(ctx, err, started);
        this.#done(event, control);
      },
    );
  }

  #handled(event: ServerEvent, started: number): void {
    this.stats.handled++;
    this.#o.metrics?.eventHandled(event.type, (performance.now() - started) / 1000);
  }

  #failed(ctx: BotContext<unknown>, err: unknown, started: number): void {
    this.stats.failed++;
    this.#o.metrics?.eventFailed(ctx.event.type, (performance.now() - started) / 1000);
    ctx.log.error({ err }, "handler failed");
  }

  /** A message's handlers finished: record it, holding its key if its next message must wait. */
  #done(event: ServerEvent, control: TaskControl): void {
    const id = ledgerIdOf(event); // begun in the ledger by #accept
    if (id === undefined) return;
    const hold = this.#finishMessage(id);
    if (hold !== undefined) control.holdKey(hold);
  }

  /**
   * Record a completion. It must be committed (it then survives a kill -9) before the
   * conversation's next message can do anything observable, or a crash would run a finished
   * handler again (found by test/e2e/crash-restart.test.ts). One commit covers every completion
   * of the same turn of the event loop.
   *
   * With a synchronous commit, that commit runs in a microtask queued by the turn's first
   * completion: the next message starts at once, but its synchronous part is all that can run
   * before the commit, since anything it awaits resumes in a later microtask and no I/O is
   * processed until the turn ends. Returns undefined then. Otherwise (a store that commits over
   * the network, or a FileStore compacting) returns the commit's promise, which the next message
   * waits for: a wave of commits per batch, which cost about 6% of dispatch (bench:ab).
   */
  #finishMessage(id: number): Promise<void> | undefined {
    this.#ledger!.finish(id);
    const round = this.#commitRound;
    if (round !== undefined) return round === IN_TURN ? undefined : round;
    if (this.#o.syncCommit?.ready()) {
      this.#commitRound = IN_TURN;
      queueMicrotask(this.#commitInTurn);
      return undefined;
    }
    const hold = Promise.resolve().then(() => {
      this.#commitRound = undefined;
      return this.#saveLedger();
    });
    this.#commitRound = hold;
    return hold;
  }

  readonly #commitInTurn = (): void => {
    this.#commitRound = undefined;
    // The store applies writes at the call (what syncCommit requires): save() has written its
    // keys once it returns, and its promise only reports.
    this.#ledger!.save().catch((err: unknown) => this.#saveFailed(err));
    try {
      // ready() said it would be synchronous; if not, commit the usual way.
      if (!this.#o.syncCommit!.commit()) void this.#saveLedger();
    } catch (err) {
      this.#saveFailed(err);
    }
  };

  async #saveLedger(): Promise<void> {
    try {
      await this.#ledger!.save();
      await (this.#o.commit ?? this.#o.flush)();
    } catch (err) {
      this.#saveFailed(err);
    }
  }

  #saveFailed(err: unknown): void {
    this.#o.log.error({ err }, "could not record handled messages in the state store; the next save retries");
  }
}

/**
 * The id the delivery ledger tracks an event by: a message event's message id. A message event
 * that failed its schema may have no message: it reaches handlers as a generic event (before this
 * check it threw in the dispatch loop, and the rest of its batch was lost).
 */
function ledgerIdOf(event: ServerEvent): number | undefined {
  if (event.type !== "message") return undefined;
  const id = (event as { message?: { id?: unknown } }).message?.id;
  return typeof id === "number" && Number.isSafeInteger(id) ? id : undefined;
}
