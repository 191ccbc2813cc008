/**
 * One bot's dispatch pipeline. Every source (the event queue, catch-up, outgoing webhooks) hands
 * it an {@link Incoming}, which goes through five stages:
 *
 * 1. **accept**: update the bot's caches, count the event, let the delivery ledger drop a message
 *    already handled (or being handled);
 * 2. **filter**: drop the bot's own messages, unless it asked for them;
 * 3. **order**: queue the event behind its conversation's earlier events (ConversationQueue);
 * 4. **run**: build the context, run the middleware and handler (the composer), count the outcome;
 * 5. **effects**: record the message as handled in the ledger ({@link Dispatcher#effectsDone}).
 *    A handler that threw runs again after a pause; an event whose every attempt failed is kept
 *    as a dead letter first (handler-failures.ts).
 *
 * `bot.onStart()` handlers and a catch-up's gap event enter at stage 3; inbound webhooks at
 * stage 4 ({@link Dispatcher.runHandler}); cron jobs at stage 4 with the same effect records,
 * retries and dead letters as events ({@link Dispatcher.runJob}).
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { ServerInfo } from "../api/server-info.ts";
import type { BotServices } from "../effects/bot-services.ts";
import type { EffectRecord, EffectRecords } from "../effects/effect-records.ts";
import type { DeadLetter, DeadLetters } from "../state/dead-letters.ts";
import type { KV } from "../state/kv.ts";
import type { JsonValue, StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { Composer } from "./composer.ts";
import {
  type BaseContext,
  type BotContext,
  type ContextDeps,
  createContext,
  LazyBaseContext,
  type SendEffects,
  type SignalSource,
} from "./context.ts";
import { BOT_KEY, ConversationKeys } from "./conversation-key.ts";
import { ConversationQueue, type TaskControl } from "./conversation-queue.ts";
import { DeliveryLedger, type LedgerCommitOptions, LedgerCommits } from "./delivery-ledger.ts";
import { type FailedRun, HandlerFailures, jobRunner, type RetryPolicy } from "./handler-failures.ts";
import {
  type BotIdentity,
  type DispatchMetrics,
  type DispatchStats,
  type Incoming,
  ledgerIdOf,
  type RunHandler,
  type RunJob,
  sourceOf,
} from "./incoming.ts";
import { PendingPrompts } from "./prompts.ts";

export interface DispatcherOptions extends LedgerCommitOptions {
  name: string;
  client: Client;
  state: KV;
  /** Where the delivery ledger lives (`<bot>/runtime`). */
  ledgerStore: StateStore;
  log: Logger;
  settings: unknown;
  clock?: Clock;
  /** ctx.snippets, ctx.users, ctx.typing, ctx.report and the limits of ctx.send. */
  services: BotServices;
  ownMessages: boolean;
  concurrency: number;
  handlerTimeoutMs: number;
  metrics?: DispatchMetrics;
  /** How a handler that throws is run again; default: once, never again. */
  retries?: RetryPolicy;
  /** Where events whose every attempt failed are kept; default: only logged. */
  letters?: DeadLetters;
  /** Where each message event's sends are recorded, so a re-run repeats none; default: none. */
  effects?: EffectRecords;
}

const LIVE = Object.freeze({ replayed: false });
const REPLAYED = Object.freeze({ replayed: true });
const ON_START = Object.freeze({ onStart: true });
const asIs = <T>(base: T): T => base;

export class Dispatcher {
  readonly stats: DispatchStats = { received: 0, handled: 0, failed: 0, replayed: 0, duplicates: 0, gaps: 0 };
  readonly #o: DispatcherOptions;
  readonly #queue: ConversationQueue;
  /** When the last event arrived (epoch ms). */
  lastEventAt: number | undefined;
  readonly #keys = new ConversationKeys();
  readonly #commits: LedgerCommits;
  readonly #failures: HandlerFailures;
  /** Handlers waiting for someone's next message (`ctx.prompt`). */
  readonly #prompts: PendingPrompts;
  /** The middleware and handlers the bot's `setup` declared. */
  composer: Composer<BotContext<unknown>> | undefined;
  // Public for reading; only the dispatcher writes them.
  /** Read from the store by {@link openLedger}. */
  ledger: DeliveryLedger | undefined;
  /** The server's limits and the bot's user, from a registration ({@link identify}). */
  server: ServerInfo | undefined;
  self: BotIdentity | undefined;
  /** What contexts are built from; rebuilt when the bot's identity changes. */
  #deps: ContextDeps<unknown> | undefined;

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#commits = new LedgerCommits(options);
    this.#failures = new HandlerFailures(options);
    this.#queue = new ConversationQueue(options);
    this.#prompts = new PendingPrompts(options.clock);
    this.runJob = jobRunner(options, this.#failures);
  }

  /**
   * Read the delivery ledger from the store (again at each start: another instance may have
   * advanced it). False, and nothing changed, when `signal` aborted meanwhile.
   */
  async openLedger(signal: AbortSignal): Promise<boolean> {
    const ledger = await DeliveryLedger.open(this.#o.ledgerStore);
    if (signal.aborted) return false;
    this.ledger = ledger;
    this.#commits.ledger = ledger;
    return true;
  }

  /** The bot's user and the server's limits, from a registration. */
  identify(server: ServerInfo, self: BotIdentity): void {
    this.server = server;
    this.self = self;
    this.#deps = undefined;
  }

  /** What a context of this bot is built from (complete once the bot has registered). */
  contextDeps(): ContextDeps<unknown> {
    const o = this.#o;
    // Made once per identity, not per event.
    this.#deps ??= {
      bot: {
        name: o.name,
        userId: this.self?.userId ?? -1,
        email: this.self?.email ?? o.client.email,
        ...(this.self?.fullName !== undefined ? { fullName: this.self.fullName } : {}),
      },
      api: o.client,
      state: o.state,
      log: o.log,
      settings: o.settings,
      server: this.server!,
      channelName: (id) => o.services.channels.nameOf(id),
      ...(o.clock ? { clock: o.clock } : {}),
      services: o.services,
      prompts: this.#prompts,
    };
    return this.#deps;
  }

  /** Events accepted whose handlers have not finished. */
  get inFlight(): number {
    return this.#queue.inFlight;
  }

  /** Resolves once fewer than `limit` events are in flight (a source's backpressure). */
  onBelow(limit: number, signal?: AbortSignal): Promise<void> {
    return this.#queue.onBelow(limit, signal);
  }

  /**
   * Wait up to `deadlineMs` for every handler to finish, then abort the ones still running.
   * Returns how many were abandoned.
   */
  async drain(deadlineMs: number): Promise<number> {
    // Handlers waiting to run again are kept as dead letters for the next start, not waited for.
    this.#failures.stop();
    try {
      await this.#queue.onIdle(AbortSignal.timeout(deadlineMs));
      return 0;
    } catch {
      const abandoned = this.#queue.inFlight;
      this.#queue.abortAll();
      this.#o.log.warn({ abandoned }, "shutdown deadline passed; handlers still running were aborted");
      return abandoned;
    }
  }

  /**
   * Stages 1 to 3 (accept, filter, order). False when dropped (a duplicate, or the bot's own
   * message); else true, and `onDone` is called once the handlers finished.
   */
  accept(incoming: Incoming, onDone?: () => void): boolean {
    const { event, issue } = incoming;
    // 1. accept. Caches first, so handlers see state that includes this event.
    if (issue === undefined) this.#o.services.observe(event);
    this.stats.received++;
    this.lastEventAt = Date.now();
    this.#o.metrics?.eventReceived(event.type);
    const messageId = ledgerIdOf(event);
    if (messageId !== undefined) {
      const ledger = this.ledger!;
      if (ledger.isDuplicate(messageId)) {
        this.stats.duplicates++;
        return false;
      }
      ledger.begin(messageId);
      // 2. filter: the server echoes the bot's own messages into its queue (NOTES §4.2).
      const sender = (event as { message: { sender_id: number } }).message.sender_id;
      if (!this.#o.ownMessages && sender === this.self?.userId) {
        void this.#commits.finish(messageId);
        return false;
      }
      // An answer to a waiting ctx.prompt() goes to it, not into the queue behind its handler.
      if (this.#prompts.size > 0 && this.#prompts.take(event)) {
        void this.#commits.finish(messageId);
        onDone?.();
        return true;
      }
    }
    // 3. order. An event that failed its schema may lack what its key is made of: the bot's key.
    this.#queue.push(issue === undefined ? this.#keys.keyOf(event) : BOT_KEY, this.#run, incoming, onDone);
    return true;
  }

  /** Take failures again after a stop (the bot was started again). */
  resume(): void {
    this.#failures.restart();
  }

  /**
   * An operator replays a dead letter: ordered with its conversation and run like a live event,
   * bypassing the ledger (its message was recorded as handled when it was kept). Resolves true
   * when it was handled (the letter is then removed).
   */
  replay(letter: DeadLetter): Promise<boolean> {
    const event = letter.event as unknown as ServerEvent;
    return new Promise((onReplayed) => {
      const incoming: Incoming = {
        event,
        replayed: true,
        issue: undefined,
        reply: undefined,
        letter,
        onReplayed,
      };
      this.#queue.push(this.#keys.keyOf(event), this.#run, incoming);
    });
  }

  /** An event the pipeline itself makes (a catch-up's gap): ordered and run, nothing to deduplicate. */
  dispatchNow(event: ServerEvent): void {
    this.#queue.push(BOT_KEY, this.#run, { event, replayed: false, issue: undefined, reply: undefined });
  }

  /** `bot.onStart()` handlers, on the bot's key (handler timeout; shutdown waits for them). */
  runOnStart(handlers: readonly ((ctx: BaseContext<unknown>) => unknown)[]): void {
    for (const handler of handlers) {
      this.#queue.push(BOT_KEY, (control) =>
        this.runHandler(control, ON_START, asIs, async (ctx) => {
          try {
            await handler(ctx);
          } catch (err) {
            ctx.log.error({ err }, "onStart handler failed");
          }
        }),
      );
    }
  }

  /** 4. run, for a handler that is not an event's (see {@link RunHandler}). */
  readonly runHandler: RunHandler = (signal, bindings, extend, handler, effects) =>
    handler(extend(new LazyBaseContext(this.contextDeps(), signal, bindings, effects)));

  /** 4–5 for a cron job's occurrence: effect records, retries, dead letters. */
  readonly runJob: RunJob;

  /**
   * 4. run, then stage 5 (or the failure stage); synchronously when every middleware and handler
   * is synchronous (no promise at all). The context's signal is the queue's: it aborts on the
   * handler timeout and at the shutdown deadline, not at stop() (that would cut every reply short).
   */
  readonly #run = (control: TaskControl, incoming: Incoming): unknown => {
    const effects = this.#effectsOf(incoming, incoming.replayed || incoming.letter !== undefined);
    const ctx = this.#contextOf(incoming, control, incoming.replayed, effects);
    const started = this.#o.metrics ? performance.now() : 0;
    let pending: Promise<void> | undefined;
    try {
      pending = this.composer!.run(ctx);
    } catch (err) {
      this.#failed(ctx, err, started);
      return this.#afterFailure(incoming, err, control, effects);
    }
    if (pending === undefined) {
      this.#handled(ctx, started);
      return this.#effectsDone(incoming, control);
    }
    return pending.then(
      () => {
        this.#handled(ctx, started);
        this.#effectsDone(incoming, control);
      },
      (err: unknown) => {
        this.#failed(ctx, err, started);
        this.#afterFailure(incoming, err, control, effects);
      },
    );
  };

  #contextOf(
    incoming: Incoming,
    signal: SignalSource,
    replayed: boolean,
    effects: SendEffects | undefined,
  ): BotContext<unknown> {
    const { event, issue } = incoming;
    const extra = issue ? { replayed, eventIssue: issue } : replayed ? REPLAYED : LIVE;
    const ctx = createContext(this.contextDeps(), event, signal, extra, effects);
    if (incoming.reply) ctx.reply = incoming.reply;
    return ctx;
  }

  /** A message event's effect records for this run (a re-run looks up what was made). */
  #effectsOf(incoming: Incoming, rerun: boolean): SendEffects | undefined {
    const id = ledgerIdOf(incoming.event);
    const records = this.#o.effects;
    if (id === undefined || records === undefined) return undefined;
    const carried = (incoming.letter?.effects ?? []) as unknown as EffectRecord[];
    const since = (incoming.event as { message: { timestamp?: number } }).message.timestamp;
    return { run: records.run(`m:${id}`, rerun, carried), after: id, since };
  }

  /**
   * A handler threw: keep its conversation closed while it runs again (and, if every attempt
   * fails, while the event is kept as a dead letter); then record the message as handled.
   */
  #afterFailure(
    incoming: Incoming,
    err: unknown,
    control: TaskControl,
    first: SendEffects | undefined,
  ): void {
    let last = first;
    const run: FailedRun = {
      event: incoming.event,
      source: sourceOf(incoming),
      ...(incoming.letter ? { letter: incoming.letter } : {}),
      again: async (signal) => {
        last = this.#effectsOf(incoming, true);
        const ctx = this.#contextOf(incoming, signal, true, last);
        const started = this.#o.metrics ? performance.now() : 0;
        try {
          await this.composer!.run(ctx);
        } catch (err) {
          this.#failed(ctx, err, started);
          throw err;
        }
        this.#handled(ctx, started);
      },
      effects: () => (last?.run.made ?? []) as unknown as JsonValue[],
    };
    const settled = this.#failures.settle(run, err).then((handled) => {
      incoming.onReplayed?.(handled);
      return incoming.letter ? undefined : this.#finish(incoming.event);
    });
    control.holdKey(settled);
  }

  #handled(ctx: BotContext<unknown>, started: number): void {
    this.stats.handled++;
    this.#o.metrics?.eventHandled(ctx.event.type, (performance.now() - started) / 1000);
  }

  #failed(ctx: BotContext<unknown>, err: unknown, started: number): void {
    this.stats.failed++;
    this.#o.metrics?.eventFailed(ctx.event.type, (performance.now() - started) / 1000);
    ctx.log.error({ err }, "handler failed");
  }

  /**
   * 5. effects: the handler finished and what it did has happened. A message is recorded as
   * handled; when that record must be durable before the conversation's next message, its key
   * is held until it is. A replayed dead letter leaves the list before the conversation moves on.
   */
  #effectsDone(incoming: Incoming, control: TaskControl): void {
    const { letter } = incoming;
    const hold = letter
      ? (this.#o.letters?.remove(letter.id) ?? Promise.resolve()).then(() => incoming.onReplayed?.(true))
      : this.#finish(incoming.event);
    if (hold !== undefined) control.holdKey(hold);
  }

  /** Record a message as handled in the ledger (begun at stage 1). */
  #finish(event: ServerEvent): Promise<void> | undefined {
    const id = ledgerIdOf(event);
    return id === undefined ? undefined : this.#commits.finish(id);
  }
}
