/**
 * One bot's lifecycle: set up its module, start its source (the event queue, or outgoing
 * webhooks), stop it within a deadline, and report its status. Events go from the source to the
 * bot's dispatch pipeline (`pipeline/dispatcher.ts`), which this only creates and drains.
 */
import { randomUUID } from "node:crypto";
import type { CaptureLog } from "../api/capture.ts";
import { type AuthError, isAuthError } from "../api/errors.ts";
import type { BotHandle } from "../bot/bot-handle.ts";
import type { BotServices } from "../effects/bot-services.ts";
import { SERVER_CLOCK_SLACK_S } from "../effects/effect-records.ts";
import type { DeadLetterSource } from "../events/dead-letter-source.ts";
import type { QueueSource } from "../events/queue-source.ts";
import type { BotContexts } from "../pipeline/bot-contexts.ts";
import type { ContextDeps, SendEffects } from "../pipeline/context.ts";
import { atNextStart, type DialogView } from "../pipeline/dialogs/dialog-entry.ts";
import { type DispatchStats, noEvents, type RunHandler } from "../pipeline/incoming.ts";
import { WebhookLedger } from "../pipeline/webhook-ledger.ts";
import type { BotScheduler } from "../scheduler/bot-scheduler.ts";
import type { KV } from "../state/kv.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { BotRuntimeOptions } from "./bot-runtime-options.ts";
import { type SetUp, setUpBot } from "./bot-setup.ts";
import { type DeliverOptions, deliverEvent } from "./deliver-event.ts";
import { type KeepOptions, keepDelivery, removeKept } from "./kept-deliveries.ts";
import { untilAborted } from "./setup-deadline.ts";
import { warnRenamedChannel, warnUnseenNames } from "./unseen-names.ts";
import { type BotParts, wireBot } from "./wire-bot.ts";

export class BotRuntime {
  readonly name: string;
  readonly #o: BotRuntimeOptions;
  readonly #parts: BotParts;
  readonly #kv: KV;
  readonly #services: BotServices;
  readonly #contexts: BotContexts;
  #setUp: SetUp | undefined;
  #source: QueueSource | undefined;
  /** The dead-letter source of the current start (set before its first look). */
  #letterSource: DeadLetterSource | undefined;
  #webhookReady = false;
  /** Told each time the bot becomes ready for outgoing-webhook deliveries. */
  readonly #readyListeners = new Set<() => void>();
  /** The start's server check is registering to read the server's identity. */
  #checking = false;
  #stopping = new AbortController();
  /** Its stop is over (its runs drained or cut off), no start since: nothing runs its dialogs. */
  #stopped = false;
  /** Its dialogs were read from the store at a start: listed and ended here from then on. */
  #dialogsRead = false;
  /** True while another instance runs this bot (cluster mode); `status.state` is then "standby". */
  standby = false;
  /** True from a reload's halt of this (old) version until its new one replaces it: "reloading". */
  reloading = false;
  /** Where a handler that is not an event's runs (cron jobs, inbound webhooks). */
  readonly runHandler: RunHandler;
  /** Recurring announcements, cron jobs and `bot.schedule`; `scheduler.stats` for metrics. */
  readonly scheduler: BotScheduler;
  /** `dry_run: true`: the writes captured instead of made. */
  readonly captured: CaptureLog | undefined;

  constructor(given: BotRuntimeOptions) {
    const options = given.daemonId ? given : { ...given, daemonId: randomUUID() };
    this.name = options.name;
    this.#o = options;
    this.captured = options.captured;
    this.#parts = wireBot(options, (type) => this.receives(type));
    this.#kv = this.#parts.kv;
    this.#services = this.#parts.services;
    this.#contexts = this.#parts.contexts;
    this.runHandler = this.#contexts.runHandler;
    this.scheduler = this.#parts.scheduler;
  }

  /** Run the module's `setup`, build the pipeline around its handlers, work out the event types. */
  async setup(signal?: AbortSignal): Promise<void> {
    await this.#setUpOnce(signal ?? this.#stopping.signal);
  }

  async #setUpOnce(signal: AbortSignal): Promise<SetUp> {
    if (this.#setUp) return this.#setUp;
    this.#setUp = await setUpBot(this.#o, this.#parts, signal);
    return this.#setUp;
  }

  /**
   * Whether the server rejects the bot's credentials: one `GET /users/me`, not retried. The
   * rejection when it does; undefined when it accepts them or cannot be asked now (the start
   * retries an unreachable server as usual).
   */
  async credentialsRejected(signal?: AbortSignal): Promise<AuthError | undefined> {
    const options = { timeoutMs: 10_000, retry: { maxAttempts: 1 }, ...(signal ? { signal } : {}) };
    return this.#o.client.users.me(options).then(
      () => undefined,
      (err: unknown) => (isAuthError(err) ? err : undefined),
    );
  }

  /** Register the queue (replaying what was missed since the last run) and start polling. */
  async start(): Promise<void> {
    // Started again after stop() on a cluster failover; a stop() during start() ends it at the next step.
    if (this.#stopping.signal.aborted) this.#stopping = new AbortController();
    this.#stopped = false;
    const signal = this.#stopping.signal;
    // An effect begun before this start and never recorded (a send cut off by a stop, or by the
    // kill of the instance this one takes the bot over from) is looked for at once by a replay, not
    // waited on as a run still going: that wait held the conversation, a dialog's answer behind it.
    this.#parts.began();
    this.#parts.storeHealth.restarted();
    // Before setup too: its `bot.state` must not read what belongs to another server.
    this.#checking = this.#o.checkServer !== undefined;
    const mode = this.#o.mode;
    const queue = mode !== "webhook" && mode !== "backtest";
    const checked = await this.#o.checkServer?.(signal, queue).finally(() => {
      this.#checking = false;
    });
    if (signal.aborted) return;
    // A stop() does not wait for a setup still running: the start gives up at once.
    const setUp = await untilAborted(this.#setUpOnce(signal), signal);
    if (!setUp) return;
    const { declarations, dispatcher, eventTypes } = setUp;
    // Outgoing-webhook deliveries come in any order (a retry goes behind later ones).
    if (!(await dispatcher.openLedger(signal, { unordered: mode === "webhook" }))) return;
    if (!(await dispatcher.openDialogs(signal))) return;
    this.#dialogsRead = true;
    if (!queue) {
      const started = await this.#parts.webhookMode(signal, checked?.registered, eventTypes);
      // A backtest needs the identity only: its events are history, its writes captured.
      if (!started || mode === "backtest") return;
      this.#webhookReady = true;
      for (const listener of [...this.#readyListeners]) listener();
    } else {
      this.#parts.stranded.warn();
      const source: QueueSource = this.#parts.queueSource(dispatcher, {
        eventTypes,
        signal,
        lastContact: this.#source?.lastContact,
        onRegistered: (reason, reg) => {
          // Nothing was recorded with the state: the server is recorded from this registration.
          if (reason === "start" && checked?.record) {
            checked
              .record(reg)
              .catch((err: unknown) => this.#o.log.warn({ err }, "could not record the server"));
          }
          // Events may have been lost with the old queue: check the bookings against the server.
          if (reason !== "start") this.scheduler.resync();
          const { server, self } = this.#contexts;
          if (server && self) this.#services.onRegistered(server, self, reg);
          // The bot's sends echo only into a queue that receives its message events.
          this.#services.echo.queue = this.receives("message")
            ? (source.consumer.queueId ?? undefined)
            : undefined;
        },
        // Of messages, only the system bots' (the Notification Bot's notes on failed sends).
        onScheduledMessages: (event) => {
          const m = event.type === "message" ? event.message : undefined;
          if (!m || this.#services.systemBots.has(m.sender_id, m.sender_email)) this.scheduler.onEvent(event);
        },
        // "This bot is stopped": its cron jobs and bookings too, which would fail on the same key.
        onAuthFailed: () => void this.scheduler.stop(0),
      });
      this.#source = source;
      await source.consumer.start();
      if (signal.aborted) return;
    }
    this.#o.account?.shared.join(this.name, setUp.member);
    dispatcher.resume();
    dispatcher.runOnStart(declarations.startHandlers);
    void warnUnseenNames(this.#o.client, setUp.named, this.#o.log, signal);
    this.#services.channels.onRenamed = (id, from, to) =>
      warnRenamedChannel(setUp.named, { id, from, to }, this.#o.log);
    // A webhook-mode bot gets no scheduled_messages events: the scheduler finds its bookings
    // sent by its own check two minutes after each occurrence.
    if (this.#source?.consumer.state !== "auth_failed") await this.scheduler.start(this.declarations, !queue);
    // After the scheduler: a cron job's dead letter is replayed by its job.
    if (!signal.aborted) {
      this.#letterSource = this.#parts.deadLetterSource(dispatcher, signal, (letter, turns) =>
        this.scheduler.replayJob(letter, turns),
      );
      await this.#letterSource?.start();
    }
  }

  /**
   * Stop polling, let handlers finish up to `deadlineMs`, delete the queue. `stop`: why the bot
   * stops alone (see Dispatcher.drain); none in the daemon's shutdown.
   */
  async stop(deadlineMs: number, stop?: string): Promise<{ abandoned: number }> {
    this.#stopping.abort(new Error("bot stopping"));
    this.#webhookReady = false;
    if (this.#setUp) this.#o.account?.shared.leave(this.name, this.#setUp.member);
    const sourceStopped = this.#source?.consumer.stop();
    const drained = this.#setUp?.dispatcher.drain(deadlineMs, stop);
    // At once, with the pipeline: no cron job fires while the stop waits for the handlers.
    const scheduled = this.scheduler.stop(deadlineMs);
    const abandoned = (await drained) ?? 0;
    await sourceStopped;
    await scheduled;
    this.#services.dispose();
    // A refused flush (the disk full) keeps the writes in memory: the store's next commit, or its
    // close at the daemon's stop, tries again (and reports it), so the stop goes on.
    await this.#o.flush().catch(() => {});
    if (this.#stopping.signal.aborted) this.#stopped = true;
    return { abandoned };
  }

  /** Calls `listener` each time the bot becomes ready for outgoing-webhook deliveries; returns its unsubscribe. */
  onReady(listener: () => void): () => void {
    this.#readyListeners.add(listener);
    return () => this.#readyListeners.delete(listener);
  }

  /** The pipeline's counters so far. */
  get stats(): DispatchStats {
    return this.#setUp?.dispatcher.stats() ?? noEvents();
  }

  /** The runtime's state as the status, `/readyz` and the status page read it. */
  #state(): string {
    if (this.reloading) return "reloading";
    if (this.standby) return "standby";
    if (this.#checking) return "registering";
    const c = this.#source?.consumer;
    // A poll sent again after a failure is a retry until the server answers: not shown running.
    if (c?.state === "polling" && c.retrying) return "backing_off";
    return c?.state ?? (this.#webhookReady ? "webhook" : this.#stopping.signal.aborted ? "stopped" : "idle");
  }

  get status() {
    const c = this.#source?.consumer;
    const d = this.#setUp?.dispatcher;
    return {
      name: this.name,
      state: this.#state(),
      queueId: c?.queueId ?? null,
      queueRegisteredAt: c?.queueId ? c.registeredAt : undefined,
      lastEventAt: d?.lastEventAt,
      registrations: c?.registrations ?? 0,
      lastHeartbeatAt: c?.lastHeartbeatAt,
      lastContactAt: c?.lastContactAt,
      longpollMs: c?.longpollMs,
      userId: this.#contexts.self?.userId,
      inFlight: d?.inFlight ?? 0,
      cursor: d?.ledger?.cursor,
      server: this.#contexts.server,
      // On standby the instance running the bot holds its dialogs: what this one saw is stale.
      dialogsWaiting: this.standby ? 0 : (d?.dialogs.size ?? 0),
      endNotes: this.standby ? [] : (d?.dialogs.log.notes.list() ?? []),
      budget: this.#o.client.budget.snapshot(),
      pacing: c?.pacer?.snapshot(),
      /** The state store's outage failing the bot's reads or writes, while it lasts. */
      storeFailure: this.#parts.storeHealth.failure,
      storeWriteFailures: this.#parts.storeHealth.totals,
      storeWaits: this.#parts.storeHealth.waitedTotal,
      ...this.stats,
    };
  }

  /** Whether the bot's queue takes events of `type` (every type, before setup). */
  receives(type: string): boolean {
    return this.#setUp?.eventTypes?.includes(type) ?? true;
  }

  /** Hand an event from another transport (an outgoing-webhook POST) to the bot (deliver-event.ts). */
  deliver(event: ServerEvent, options: DeliverOptions = {}): Promise<boolean> {
    const dispatcher = this.#setUp?.dispatcher;
    if (!dispatcher) return Promise.reject(new Error(`bot ${this.name}: setup() has not run`));
    return deliverEvent(dispatcher, event, options, this.#parts.fresh);
  }

  /**
   * Keep `event`, an outgoing-webhook delivery about to be answered while its message is not
   * handled, as a dead letter marked for replay, written and flushed (see kept-deliveries.ts): one
   * that came while the bot is not ready, run by the bot's dead-letter source once it is; one whose
   * handler still runs (`running`), left to that run, which settles it ({@link settleDelivery}).
   */
  async keepDelivery(event: ServerEvent, options: KeepOptions = {}): Promise<string | undefined> {
    const { letters, flush, clock, daemonId } = this.#o;
    const id = await keepDelivery({ letters, flush, clock, daemonId: daemonId! }, event, options);
    // Ready meanwhile, its source may have looked before the letter was written.
    if (id && !options.running && this.#webhookReady) void this.#letterSource?.look();
    return id;
  }

  /**
   * The run of a delivery kept while its handler ran ({@link keepDelivery}) is over: its letter
   * goes once message `messageId` is recorded as handled (true): `id`, or without it (its write
   * reported failed) any letter of it marked as this daemon's run. A run over without that record
   * (timed out, or cut off by the stop) leaves the letter to the next start (false).
   */
  async settleDelivery(id: string | undefined, messageId: number): Promise<boolean> {
    const ledger = this.#setUp?.dispatcher.ledger;
    if (ledger instanceof WebhookLedger && !ledger.handled(messageId)) return false;
    await removeKept(this.#o.letters, this.#o.daemonId!, messageId, id);
    return true;
  }

  /**
   * The bot's `limit` oldest open dialogs (`ctx.prompt`) this process knows (all by default), oldest
   * first; none on standby, where the instance running the bot lists them.
   */
  dialogs(limit?: number): DialogView[] {
    if (this.standby) return [];
    const listed = this.#parts.stranded.mark(this.#setUp?.dispatcher.dialogs.list(limit) ?? []);
    return this.#stopped ? listed.map(atNextStart) : listed;
  }

  /**
   * Whether a start of this version read its dialogs from the store. Before that (its start under
   * way, or failed before it got there) this process knows none of them: {@link dialogs} is empty.
   */
  get dialogsRead(): boolean {
    return this.#dialogsRead;
  }

  /**
   * Resolves true once the runs of a dialog that message `id` began as its answer are over: the
   * message is marked handled when the answer is recorded, before that run (the testing kit's
   * `handled`); `question`: `id` is the bot's question, answered by a press. False if `signal` aborts first.
   */
  answerRunsOver(id: number, signal: AbortSignal, question = false): Promise<boolean> {
    return this.#setUp?.dispatcher.answerRunsOver(id, signal, question) ?? Promise.resolve(true);
  }

  /** End dialog `id` for an operator, its person told `note`; false when there is none here. */
  endDialog(id: string, note: string): Promise<boolean> {
    return this.#setUp?.dispatcher.endDialog(id, note) ?? Promise.resolve(false);
  }

  /** What `bot.recurring`, `bot.cron` and `bot.webhook` declared in `setup`. */
  get declarations(): Pick<BotHandle<unknown>, "recurring" | "cronJobs" | "webhooks"> {
    const h = this.#setUp?.declarations;
    if (!h) throw new Error(`bot ${this.name}: setup() has not run`);
    return { recurring: h.recurring, cronJobs: h.cronJobs, webhooks: h.webhooks };
  }

  /** What a context of this bot is built from (complete once the bot has registered). */
  contextDeps(): ContextDeps<unknown> {
    return this.#contexts.deps();
  }

  /**
   * The records a handler run's sends go through, under `key`, read first (a run again makes none
   * twice); kept `keptMs` if given, else the bot's default. A send (or snippet) whose answer was
   * lost is looked for back to when the first run of `key` began (`nowMs` for the first one, kept
   * with the records), less the server's clock's slack.
   */
  async sendEffects(key: string, nowMs: number, keptMs?: number): Promise<SendEffects> {
    const records = keptMs === undefined ? this.#parts.effects : this.#parts.effects.keptFor(keptMs);
    const begun = await records.firstBegun(key, nowMs);
    const since = Math.floor(begun / 1000) - SERVER_CLOCK_SLACK_S;
    return { run: records.run(key, true), after: undefined, since };
  }
}
