import { timeoutSignal } from "../api/sleep.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import type { StateStore } from "../state/state-store.ts";
import { realClock } from "../time/clock.ts";
import { type AnyEvent, isTypedEvent, type ServerEvent } from "../wire/events.ts";
import type { Composer } from "./composer.ts";
import type { BaseContext, BotContext } from "./context.ts";
import { BOT_KEY, ConversationKeys } from "./conversation-key.ts";
import type { ConversationQueue } from "./conversation-queue.ts";
import { DeliveryLedger, LEDGER_CARRIED, type MessageLedger } from "./delivery-ledger.ts";
import { whenAnswerRun, whenQuestionRun } from "./dialogs/dialog-entry.ts";
import type { Move } from "./dialogs/dialog-moves.ts";
import { DialogEngine } from "./dialogs/dialog-runs.ts";
import type { Dialogs } from "./dialogs/dialogs.ts";
import type { DispatcherParts } from "./dispatcher-parts.ts";
import { ledgerIdOf, senderIdOf } from "./event-fields.ts";
import type { HandlerFailures } from "./handler-failures.ts";
import { type DispatchStats, type Incoming, noEvents } from "./incoming.ts";
import { LedgerCommits } from "./ledger-commits.ts";
import { LeftRuns, STOP_GRACE_MS } from "./left-runs.ts";
import { replayLetter } from "./letter-replay.ts";
import type { LetterTurns } from "./replay-turns.ts";
import { HandlerRuns } from "./runs.ts";
import { LEASE_STOP } from "./stop-cut.ts";
import { markAnswersHandled, WebhookLedger } from "./webhook-ledger.ts";

export type { DispatcherParts } from "./dispatcher-parts.ts";

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
  readonly #runs: HandlerRuns;
  /** What a message means to the bot's dialogs, before its handlers. */
  readonly #engine: DialogEngine;
  /** Stages 4 and 5 (dialogs, then runs.ts), as a queue task. */
  readonly #run: DialogEngine["run"];
  /** True while the stop's deadline drops the waiting events (their `onDone` is called then). */
  #dropping = false;
  /** The runs a stop left running past its grace: nothing of them is recorded as they end. */
  readonly #left: LeftRuns;

  constructor(parts: DispatcherParts) {
    this.#o = parts;
    this.#composer = parts.composer;
    this.#queue = parts.queue;
    this.#failures = parts.failures;
    const finish = (id: number) => this.#commits?.finish(id);
    this.#runs = new HandlerRuns(parts, this.#stats, finish);
    const { dialogs, queue, contexts, log, commands } = parts;
    this.#engine = new DialogEngine({ dialogs, queue, contexts, log, runs: this.#runs, commands });
    this.#run = this.#engine.run;
    const keep = parts.failures.keepLeft.bind(parts.failures);
    this.#left = new LeftRuns({ log: parts.log, keep, finish, entry: this.#run });
  }

  /**
   * Read the delivery ledger from the store (again at each start: another instance may have
   * advanced it), and the failed attempts counted. False, and nothing changed, when `signal`
   * aborted meanwhile. `unordered`: the messages come from outgoing-webhook deliveries, in any
   * order and with no catch-up (the ledger keeps handled ids, not a cursor: webhook-ledger.ts).
   */
  async openLedger(signal: AbortSignal, options: { unordered?: boolean } = {}): Promise<boolean> {
    const [{ ledgerStore: store, log }, before] = [this.#o, this.#commits?.ledger];
    const opened = options.unordered ? WebhookLedger.open(store, log) : DeliveryLedger.open(store);
    const [ledger] = await Promise.all([opened, this.#failures.loadCounts()]);
    if (signal.aborted) return false;
    // Read back without a cursor after a start here had one: the store lost it (delivery-ledger.ts).
    if (ledger instanceof DeliveryLedger && before instanceof DeliveryLedger && (await ledger.carry(before)))
      log.warn({ cursor: ledger.cursor }, LEDGER_CARRIED);
    this.#commits = new LedgerCommits(ledger, this.#o.ledgerCommits);
    return true;
  }

  /** The delivery ledger, once {@link openLedger} read it. */
  get ledger(): MessageLedger | undefined {
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
   * Returns how many were abandoned. `stop`: why the bot stops alone (its lease, a reload), said
   * with the aborted handlers; none in the daemon's shutdown.
   */
  async drain(deadlineMs: number, stop?: string): Promise<number> {
    // Handlers waiting to run again are kept as dead letters for the next start, not waited for.
    this.#failures.stop(stop);
    this.#commits?.stop();
    this.#o.dialogs.pause(); // Dialogs wait in the store, not in handlers: only their timers stop.
    this.#engine.stopping(stop);
    const deadline = timeoutSignal(this.#o.clock, deadlineMs);
    let abandoned = 0;
    try {
      await this.#queue.onIdle(deadline.signal);
    } catch {
      abandoned = this.#abortRunning(stop);
    } finally {
      deadline.clear();
    }
    // Before the store closes: a run the abort ended keeps its letter and its message's mark,
    // within a grace; one still running then is left, and so is a run the handler timeout cut that
    // still goes on (a first attempt deaf to its signal, later attempts after it threw). Real
    // time: the bot's clock may be held (the testing kit's), and the grace bounds a wait of the process.
    const grace = timeoutSignal(realClock, STOP_GRACE_MS);
    try {
      await this.#left.leave(await this.#queue.abortedEnded(grace.signal), stop);
    } finally {
      grace.clear();
      await this.#failures.stoppedCleanly();
    }
    return abandoned;
  }

  /** The stop's deadline passed: abort the handlers still running. Returns how many events were in flight. */
  #abortRunning(stop: string | undefined): number {
    const abandoned = this.#queue.inFlight;
    this.#dropping = true;
    try {
      this.#queue.abortAll();
    } finally {
      this.#dropping = false;
    }
    if (stop === undefined)
      this.#o.log.warn({ abandoned }, "shutdown deadline passed; handlers still running were aborted");
    // A lost lease's stop is said by the coordinator, with the events it left (`abandoned`).
    else
      this.#o.log[stop === LEASE_STOP ? "debug" : "warn"](
        { abandoned, stop },
        "the bot's stop deadline passed; handlers still running were aborted",
      );
    return abandoned;
  }

  /**
   * Stages 1 to 3 (accept, filter, order). False when dropped (a duplicate, or the bot's own
   * message); else true, and `onDone` is called once the handlers finished.
   */
  accept(incoming: Incoming, onDone?: () => void): boolean {
    const at = this.#o.clock.now();
    this.#lastEventAt = at;
    return this.#accept(incoming, onDone, at);
  }

  /** {@link accept} for each event of a poll's answer, in order: the clock is read once. */
  acceptAll(batch: readonly Incoming[]): void {
    const at = this.#o.clock.now();
    this.#lastEventAt = at;
    // Indexed: the loop runs thousands of times before the JIT optimizes it (no iterator then).
    for (let i = 0; i < batch.length; i++) this.#accept(batch[i] as Incoming, undefined, at);
  }

  #accept(incoming: Incoming, onDone: (() => void) | undefined, at: number): boolean {
    const { event, issue } = incoming;
    incoming.reachedAt = at;
    const typed = isTypedEvent(event, issue);
    // 1. accept. Caches first, so handlers see state that includes this event.
    if (typed) this.#o.services.observe(event);
    this.#stats.received++;
    this.#o.metrics?.eventReceived(event.type);
    const messageId = ledgerIdOf(event);
    if (messageId !== undefined) {
      const commits = this.#commits;
      if (commits === undefined)
        throw new Error("a message reached the pipeline before its ledger was opened");
      const ledger = commits.ledger;
      if (ledger.isDuplicate(messageId)) {
        if (ledger.isLate?.(messageId)) {
          this.#stats.late++;
          this.#o.metrics?.lateDelivery();
        } else this.#stats.duplicates++;
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
    }
    if (incoming.replayed) this.#stats.replayed++;
    // 3. order. An event that failed its schema may lack what its key is made of: the bot's key.
    let key = typed ? this.#keys.keyOf(event) : BOT_KEY;
    // A press on a question's button is ordered with the messages where the question takes its
    // answers, so that an answer typed before it goes first (the keys remember no message of the
    // bot's own, the questions included, and nothing from before a start).
    if (typed && event.type === "reaction") {
      const buttons = this.#o.dialogs.buttons;
      // Read by the catch-up of the queue that brings it too: handed on already.
      if (incoming.queue !== undefined && buttons.seenLive(event)) return false;
      const place = buttons.placeOf(event.message_id);
      key = place ?? key;
      // A press on a button, live: a read-back (a new queue's catch-up) finding it before its run
      // is over hands it on no second time (`Buttons.handOn`).
      const done = place !== undefined && event.op === "add" ? buttons.handOn(event) : undefined;
      if (done !== undefined) onDone = both(done, onDone);
    }
    // A move or a deletion may concern a waiting dialog's question.
    if (typed && (event.type === "update_message" || event.type === "delete_message"))
      this.#engine.accepting(event, key);
    this.#queue.push(key, this.#run, incoming, onDone);
    return true;
  }

  /** Read the bot's dialogs at each start, after the ledger (webhook mode: markAnswersHandled). False if aborted. */
  async openDialogs(signal: AbortSignal): Promise<boolean> {
    return (await this.#engine.open(signal)) && markAnswersHandled(this.#o.dialogs, this.#commits);
  }

  /** Take failures again after a stop (the bot was started again); dialogs go on. */
  resume(): void {
    this.#failures.restart();
    this.#engine.start();
  }

  /** The bot's dialogs (`ctx.prompt`). */
  get dialogs(): Dialogs {
    return this.#o.dialogs;
  }

  /**
   * The waiting questions are read back after a new queue: `read` follows each one moved meanwhile
   * (with `follow`), ends the step of each one deleted (with `gone`), and the messages that may
   * answer them wait for it.
   */
  readBackMoves(
    read: (
      follow: (move: Move, signal: AbortSignal) => Promise<void>,
      gone: (ids: readonly number[], signal: AbortSignal) => Promise<void>,
    ) => Promise<unknown>,
  ): void {
    if (this.#o.dialogs.size === 0) return;
    const engine = this.#engine;
    const moves = engine.moves;
    moves.readingBack(
      read(
        (move, signal) => moves.followNow(move, signal),
        (ids, signal) => engine.goneNow(ids, signal),
      ),
    );
  }

  /**
   * Resolves once the dialog runs message `id` began as an answer are over (see `whenAnswerRun`);
   * `question`: `id` is the bot's own, a question a press answers (see `whenQuestionRun`).
   */
  answerRunsOver(id: number, signal: AbortSignal, question = false): Promise<boolean> {
    const dialogs = this.#o.dialogs;
    return (question ? whenQuestionRun : whenAnswerRun)(() => dialogs.entries(), id, signal);
  }

  /** An operator ends dialog `id`; the person is told `note`. False when there is no such dialog. */
  endDialog(id: string, note: string): Promise<boolean> {
    return this.#engine.endByOperator(id, note);
  }

  /**
   * An operator replays a dead letter (letter-replay.ts): resolves true when it was handled (then
   * removed). `turns`: its attempts' among the bot's replays (replay-turns.ts).
   */
  replay(letter: DeadLetter, turns?: LetterTurns): Promise<boolean> {
    const { log, letters } = this.#o;
    const push = (
      event: AnyEvent,
      issue: string | undefined,
      incoming: Incoming,
      task: DialogEngine["run"],
    ) => this.#queue.push(isTypedEvent(event, issue) ? this.#keys.keyOf(event) : BOT_KEY, task, incoming);
    return replayLetter({ log, letters, commits: this.#commits, run: this.#run, push }, letter, turns);
  }

  /**
   * Hooks for the saved events (events/saved-events.ts: non-message events kept in the runtime
   * namespace until their runs are over, so that a kill loses none). `store`, `commit`: where the
   * ledger lives and how it is made durable; `now`: the bot's clock. `dropping`: true while the stop's deadline drops the
   * events still waiting (their `onDone` is called without a run: they stay saved, for the next start).
   */
  get saved(): {
    store: StateStore;
    commit(): Promise<void>;
    now(): number;
    readonly dropping: boolean;
  } {
    const dispatcher = this;
    const clock = this.#o.clock;
    return {
      store: this.#o.ledgerStore,
      commit: this.#o.ledgerCommits.commit,
      now: () => clock.now(),
      get dropping() {
        return dispatcher.#dropping;
      },
    };
  }

  /**
   * A saved event a stop or a kill left unfinished, run again at a start: ordered with its
   * conversation and run as a live event (its effect records read, as for a run again), without the
   * caches seeing it (the new queue's snapshot is newer) and with no ledger (it is no message).
   * `onDone` once its run is over.
   */
  rerun(incoming: Incoming, onDone: () => void): void {
    const { event, issue } = incoming;
    this.#stats.replayed++;
    this.#queue.push(
      isTypedEvent(event, issue) ? this.#keys.keyOf(event) : BOT_KEY,
      this.#run,
      incoming,
      onDone,
    );
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
        this.#o.contexts.runHandler(control, "on-start", ON_START, asIs, async (ctx) => {
          try {
            await handler(ctx);
          } catch (err) {
            ctx.log.error({ err }, "onStart handler failed");
          }
        }),
      );
    }
  }
}

/** `first`, then `then` if given. */
function both(first: () => void, then: (() => void) | undefined): () => void {
  if (then === undefined) return first;
  return () => {
    first();
    then();
  };
}
