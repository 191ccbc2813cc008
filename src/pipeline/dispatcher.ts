/**
 * One bot's dispatch pipeline. Every source (the event queue, catch-up, outgoing webhooks) hands
 * it an {@link Incoming}, which goes through five stages:
 *
 * 1. **accept**: update the bot's caches, count the event, let the delivery ledger drop a message
 *    already handled (or being handled); hand the answer a waiting `ctx.prompt()` asked for to it;
 * 2. **filter**: drop the bot's own messages, unless it asked for them;
 * 3. **order**: queue the event behind its conversation's earlier events (ConversationQueue);
 * 4. **run**: build the context, run the middleware and handler (the composer), count the outcome;
 * 5. **effects**: apply the run's staged `ctx.state` writes (once per event, see state/staged-state.ts),
 *    then record the message as handled in the ledger ({@link Dispatcher#effectsDone}).
 *    A handler that threw runs again after a pause; an event whose every attempt failed is kept
 *    as a dead letter first (handler-failures.ts).
 *
 * `bot.onStart()` handlers and a catch-up's gap event enter at stage 3; inbound webhooks at
 * stage 4 (`BotContexts.runHandler`); cron jobs at stage 4 with the same effect records,
 * retries and dead letters as events (`jobRunner` in handler-failures.ts).
 */
import type { Logger } from "pino";
import { timeoutSignal } from "../api/sleep.ts";
import type { BotServices } from "../effects/bot-services.ts";
import type { EffectRecord, EffectRecords } from "../effects/effect-records.ts";
import type { DeadLetter, DeadLetters } from "../state/dead-letters.ts";
import { KV, type StateRun } from "../state/kv.ts";
import type { JsonValue, StateStore } from "../state/state-store.ts";
import { type Clock, monotonicMs } from "../time/clock.ts";
import { type AnyEvent, isTypedEvent, reviveEvent, type ServerEvent } from "../wire/events.ts";
import type { BotContexts } from "./bot-contexts.ts";
import type { Composer } from "./composer.ts";
import {
  type BaseContext,
  type BotContext,
  createContext,
  type SendEffects,
  type SignalSource,
} from "./context.ts";
import { BOT_KEY, ConversationKeys } from "./conversation-key.ts";
import type { ConversationQueue, TaskControl } from "./conversation-queue.ts";
import { DeliveryLedger, type LedgerCommitOptions, LedgerCommits } from "./delivery-ledger.ts";
import type { FailedRun, HandlerFailures } from "./handler-failures.ts";
import {
  type DispatchMetrics,
  type DispatchStats,
  type Incoming,
  ledgerIdOf,
  noEvents,
  senderIdOf,
  sentAtOf,
  sourceOf,
  stateKeyOf,
} from "./incoming.ts";
import { promptEndLine, promptUnanswered } from "./prompts.ts";

/** What a bot's pipeline is built from (by the bot's composition root, daemon/wire-bot.ts). */
export interface DispatcherParts {
  /** The middleware and handlers the bot's `setup` declared. */
  composer: Composer<BotContext<unknown>>;
  /** What contexts are built from, and the bot's identity once registered. */
  contexts: BotContexts;
  /** Orders the events per conversation, within the concurrency and the handler timeout. */
  queue: ConversationQueue;
  /** Runs a failed handler again, then keeps it as a dead letter. */
  failures: HandlerFailures;
  /** Where the delivery ledger lives (`<bot>/runtime`), and how its records are made durable. */
  ledgerStore: StateStore;
  ledgerCommits: LedgerCommitOptions;
  /** Updates the bot's caches from each event before its handlers run. */
  services: BotServices;
  /** Run the handlers for the bot's own messages too (config `own_messages`). */
  ownMessages: boolean;
  clock: Clock;
  log: Logger;
  metrics: DispatchMetrics | undefined;
  /** Where a replayed dead letter is removed from once handled. */
  letters: DeadLetters | undefined;
  /** Where each message event's sends are recorded, so a re-run repeats none. */
  effects: EffectRecords | undefined;
}

type FailedArgs = [Incoming, TaskControl, BotContext<unknown>, number, unknown, SendEffects | undefined];
const LIVE = Object.freeze({ replayed: false });
const REPLAYED = Object.freeze({ replayed: true });
const ON_START = Object.freeze({ onStart: true });
const asIs = <T>(base: T): T => base;

export class Dispatcher {
  readonly #o: DispatcherParts;
  readonly #composer: Composer<BotContext<unknown>>;
  readonly #queue: ConversationQueue;
  readonly #failures: HandlerFailures;
  readonly #keys = new ConversationKeys();
  readonly #stats: DispatchStats = noEvents();
  /** The ledger read by {@link openLedger} and how its records are committed. */
  #commits: LedgerCommits | undefined;
  #lastEventAt: number | undefined;

  constructor(parts: DispatcherParts) {
    this.#o = parts;
    this.#composer = parts.composer;
    this.#queue = parts.queue;
    this.#failures = parts.failures;
  }

  /**
   * Read the delivery ledger from the store (again at each start: another instance may have
   * advanced it). False, and nothing changed, when `signal` aborted meanwhile.
   */
  async openLedger(signal: AbortSignal): Promise<boolean> {
    const ledger = await DeliveryLedger.open(this.#o.ledgerStore);
    if (signal.aborted) return false;
    this.#commits = new LedgerCommits(ledger, this.#o.ledgerCommits);
    return true;
  }

  /** The delivery ledger, once {@link openLedger} read it. */
  get ledger(): DeliveryLedger | undefined {
    return this.#commits?.ledger;
  }

  /** When the last event arrived (epoch ms on the bot's clock). */
  get lastEventAt(): number | undefined {
    return this.#lastEventAt;
  }

  /** The pipeline's counters so far (a copy). */
  stats(): DispatchStats {
    return { ...this.#stats };
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
    // A handler waiting on ctx.prompt() ends now rather than hold the stop until its timeout.
    this.#o.contexts.prompts.stop();
    const deadline = timeoutSignal(this.#o.clock, deadlineMs);
    try {
      await this.#queue.onIdle(deadline.signal);
      return 0;
    } catch {
      const abandoned = this.#queue.inFlight;
      this.#queue.abortAll();
      this.#o.log.warn({ abandoned }, "shutdown deadline passed; handlers still running were aborted");
      return abandoned;
    } finally {
      deadline.clear();
    }
  }

  /**
   * Stages 1 to 3 (accept, filter, order). False when dropped (a duplicate, or the bot's own
   * message); else true, and `onDone` is called once the handlers finished.
   */
  accept(incoming: Incoming, onDone?: () => void): boolean {
    const { event, issue } = incoming;
    const typed = isTypedEvent(event, issue);
    // 1. accept. Caches first, so handlers see state that includes this event.
    if (typed) this.#o.services.observe(event);
    this.#stats.received++;
    this.#lastEventAt = this.#o.clock.now();
    this.#o.metrics?.eventReceived(event.type);
    const messageId = ledgerIdOf(event);
    if (messageId !== undefined) {
      const commits = this.#commits;
      if (commits === undefined)
        throw new Error("a message reached the pipeline before its ledger was opened");
      const ledger = commits.ledger;
      if (ledger.isDuplicate(messageId)) {
        this.#stats.duplicates++;
        return false;
      }
      ledger.begin(messageId);
      // 2. filter: the server echoes the bot's own messages into its queue (see
      // docs/internals/server-behaviour.md#event-shapes).
      const sender = senderIdOf(event);
      if (!this.#o.ownMessages && sender === this.#o.contexts.self?.userId) {
        void commits.finish(messageId);
        return false;
      }
      // An answer to a waiting ctx.prompt() goes to it, not into the queue behind its handler.
      const prompts = this.#o.contexts.prompts;
      if (prompts.size > 0 && typed && prompts.take(event)) {
        void commits.finish(messageId);
        onDone?.();
        return true;
      }
    }
    if (incoming.replayed) this.#stats.replayed++;
    // 3. order. An event that failed its schema may lack what its key is made of: the bot's key.
    const key = typed ? this.#keys.keyOf(event) : BOT_KEY;
    this.#queue.push(key, this.#run, incoming, onDone);
    return true;
  }

  /** Take failures again after a stop (the bot was started again). */
  resume(): void {
    this.#failures.restart();
    this.#o.contexts.prompts.restart();
  }

  /**
   * An operator replays a dead letter: ordered with its conversation and run like a live event,
   * bypassing the ledger (its message was recorded as handled when it was kept). Resolves true
   * when it was handled (the letter is then removed).
   */
  replay(letter: DeadLetter): Promise<boolean> {
    const { event, issue } = reviveEvent(letter.event);
    return new Promise((onReplayed) => {
      const incoming: Incoming = { event, replayed: true, issue, reply: undefined, letter, onReplayed };
      this.#queue.push(isTypedEvent(event, issue) ? this.#keys.keyOf(event) : BOT_KEY, this.#run, incoming);
    });
  }

  /** An event the pipeline itself makes (a catch-up's gap): ordered and run, nothing to deduplicate. */
  dispatchNow(event: ServerEvent): void {
    if (event.type === "gap") this.#stats.gaps++;
    this.#queue.push(BOT_KEY, this.#run, { event, replayed: false, issue: undefined, reply: undefined });
  }

  /** `bot.onStart()` handlers, on the bot's key (handler timeout; shutdown waits for them). */
  runOnStart(handlers: readonly ((ctx: BaseContext<unknown>) => unknown)[]): void {
    for (const handler of handlers) {
      this.#queue.push(BOT_KEY, (control) =>
        this.#o.contexts.runHandler(control, ON_START, asIs, async (ctx) => {
          try {
            await handler(ctx);
          } catch (err) {
            ctx.log.error({ err }, "onStart handler failed");
          }
        }),
      );
    }
  }

  /**
   * 4. run, then stage 5 (or the failure stage); synchronously when every middleware and handler
   * is synchronous (no promise at all). The context's signal is the queue's: it aborts on the
   * handler timeout and at the shutdown deadline, not at stop() (that would cut every reply short).
   */
  readonly #run = (control: TaskControl, incoming: Incoming): unknown => {
    const effects = this.#effectsOf(incoming, incoming.replayed || incoming.letter !== undefined);
    const state = KV.run(this.#o.contexts.state, stateKeyOf, incoming);
    const ctx = this.#contextOf(incoming, control, incoming.replayed, effects, state);
    const started = this.#o.metrics ? monotonicMs() : 0;
    let pending: Promise<void> | undefined;
    try {
      pending = this.#composer.run(ctx);
    } catch (err) {
      return this.#runFailed(incoming, control, ctx, started, err, effects);
    }
    if (pending === undefined) return this.#succeeded(incoming, control, ctx, started, state, effects);
    return pending.then(
      () => this.#succeeded(incoming, control, ctx, started, state, effects),
      (err: unknown) => this.#runFailed(incoming, control, ctx, started, err, effects),
    );
  };

  /** The handlers returned: the run's staged state writes are applied (if any), then stage 5. */
  #succeeded(
    incoming: Incoming,
    control: TaskControl,
    ctx: BotContext<unknown>,
    started: number,
    state: StateRun,
    effects: SendEffects | undefined,
  ): unknown {
    const applied = state.commit();
    if (applied !== undefined) {
      return applied.then(
        () => this.#succeeded(incoming, control, ctx, started, state, effects),
        (err: unknown) => this.#runFailed(incoming, control, ctx, started, err, effects),
      );
    }
    this.#handled(ctx, started);
    return this.#effectsDone(incoming, control);
  }

  /** The run threw (off the hot path: its arguments come as one array). */
  #runFailed(...[incoming, control, ctx, started, err, effects]: FailedArgs): void {
    this.#failed(ctx, err, started);
    this.#afterFailure(incoming, err, control, effects);
  }

  #contextOf(
    incoming: Incoming,
    signal: SignalSource,
    replayed: boolean,
    effects: SendEffects | undefined,
    state: StateRun,
  ): BotContext<unknown> {
    const { event, issue } = incoming;
    const extra = issue ? { replayed, eventIssue: issue } : replayed ? REPLAYED : LIVE;
    const ctx = createContext(this.#o.contexts.deps(), event, signal, extra, effects, state);
    if (incoming.reply) ctx.reply = incoming.reply;
    return ctx;
  }

  /** A message event's effect records for this run (a re-run looks up what was made). */
  #effectsOf(incoming: Incoming, rerun: boolean): SendEffects | undefined {
    const id = ledgerIdOf(incoming.event);
    const records = this.#o.effects;
    if (id === undefined || records === undefined) return undefined;
    const carried = (incoming.letter?.effects ?? []) as unknown as EffectRecord[];
    const since = sentAtOf(incoming.event);
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
        const state = KV.run(this.#o.contexts.state, stateKeyOf, incoming);
        const ctx = this.#contextOf(incoming, signal, true, last, state);
        const started = this.#o.metrics ? monotonicMs() : 0;
        try {
          await this.#composer.run(ctx);
          await state.commit();
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
    this.#stats.handled++;
    this.#o.metrics?.eventHandled(ctx.event.type, (monotonicMs() - started) / 1000);
  }

  #failed(ctx: BotContext<unknown>, err: unknown, started: number): void {
    if (promptUnanswered(err)) {
      // A normal end of a conversation (the failure stage then neither retries nor keeps it).
      ctx.log.info({ prompt: err.message }, promptEndLine(err));
      this.#handled(ctx, started);
      return;
    }
    this.#stats.failed++;
    this.#o.metrics?.eventFailed(ctx.event.type, (monotonicMs() - started) / 1000);
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
  #finish(event: AnyEvent): Promise<void> | undefined {
    const id = ledgerIdOf(event);
    return id === undefined ? undefined : this.#commits?.finish(id);
  }
}
