/**
 * The event queue as a source of the dispatch pipeline: register (noting the first start's
 * baseline), poll, and after each new queue replay what was missed and report a gap.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { serverInfoFrom } from "../api/server-info.ts";
import type { BotContexts } from "../pipeline/bot-contexts.ts";
import type { MessageLedger } from "../pipeline/delivery-ledger.ts";
import { askedIn } from "../pipeline/dialogs/dialog-deletions.ts";
import { askedInChannels, type Move } from "../pipeline/dialogs/dialog-moves.ts";
import type { Dispatcher } from "../pipeline/dispatcher.ts";
import type { Incoming } from "../pipeline/incoming.ts";
import { type Clock, nextTurn } from "../time/clock.ts";
import type { ParsedEvent, ServerEvent } from "../wire/events.ts";
import type { Message, Narrow } from "../wire/records.ts";
import type { RegisterResponse } from "../wire/responses.ts";
import { catchUp, newestMessageId, type ReplayLimits, wantsMessages } from "./catch-up.ts";
import { followMovedQuestions } from "./moved-questions.ts";
import { PollPacer } from "./poll-pacing.ts";
import { QueueConsumer, type RegisterReason } from "./queue-consumer.ts";
import { catchUpReactions } from "./reaction-catch-up.ts";
import { registerParams } from "./register-params.ts";
import { StartSaves } from "./saved-events.ts";
import { identityOf, queueApiFor } from "./server-queue.ts";

/** What the queue source reports (the daemon's /metrics, bound to the bot's name). */
export interface QueueMetrics {
  queueRegistered(reason: string): void;
  /** The polls (or a registration) wait `ms` for a server's 429 the client handed on. */
  rateLimitWait(ms: number): void;
  messagesReplayed(count: number): void;
  gap(): void;
}

export interface QueueSourceOptions {
  client: Client;
  log: Logger;
  clock: Clock;
  dispatcher: Dispatcher;
  /** Told the bot's identity and the server's limits at each registration. */
  contexts: BotContexts;
  /** The bot's subscribed event types (`null`: all). */
  eventTypes: readonly string[] | null;
  /**
   * The event types the bot's code asked for (`null`: all), of which the unfinished ones are saved
   * against a kill (saved-events.ts). Not those its waiting dialogs added (reactions, moves,
   * deletions): taken at accept, and read again at every new queue.
   */
  savedTypes: readonly string[] | null;
  narrow: Narrow | undefined;
  allPublicStreams: boolean | undefined;
  replay: ReplayLimits;
  /** Added to the server's long-poll timeout to make a poll's HTTP timeout. */
  longpollMarginMs: number;
  /** Backoff for 5xx and network errors: first delay and cap. */
  backoff: { initialMs: number; maxMs: number };
  /** Make the store's writes durable (the first start's baseline must be before any message runs). */
  flush(): Promise<void>;
  metrics: QueueMetrics | undefined;
  /** Aborted when the bot stops: catch-up gives up. */
  signal: AbortSignal;
  /** When the server was last heard from by the bot's previous source, if it had one (a restart). */
  lastContact: number | undefined;
  /**
   * A new queue is registered and the bot's identity known; called before catch-up. `reg` carries
   * the initial state the caches are seeded from (users, user groups) when the queue fetched it.
   */
  onRegistered(reason: RegisterReason, reg: RegisterResponse): void;
  /**
   * A `scheduled_messages` event (the scheduler follows its bookings through them), or a message
   * event (the Notification Bot says why a booking failed) as it arrives, or replayed unhandled
   * after a new queue.
   */
  onScheduledMessages(event: ServerEvent): void;
  /** The server refused the bot's key while it polled: the bot is stopped (see QueueConsumer). */
  onAuthFailed(): void;
}

/** What one start of the queue source is bound to (the runtime's side of it). */
export type QueueStart = Pick<
  QueueSourceOptions,
  "eventTypes" | "signal" | "lastContact" | "onRegistered" | "onScheduledMessages" | "onAuthFailed"
>;

/** Stop polling while this many events are waiting or running (bounded memory). */
const MAX_IN_FLIGHT = 256;

export class QueueSource {
  readonly consumer: QueueConsumer;
  readonly #o: QueueSourceOptions;
  /** The newest message id seen just before the first-ever registration (the ledger's baseline). */
  #baselineCandidate: number | undefined;
  /** When the server was last heard from on the previous queue (the `since` of a gap). */
  #lastContactBeforeGap: number | undefined;

  /** The event types the queue is registered for (`null`: all); grown by {@link want}. */
  #eventTypes: readonly string[] | null;
  /** The event types the latest registration asked for: a {@link want} since renews its queue. */
  #registeredTypes: readonly string[] | null = null;
  /** The bot's non-message events not yet handled, kept against a kill (saved-events.ts). */
  readonly #saved: StartSaves;

  /** When the server was last heard from with events on the current queue (a later source's `lastContact`). */
  get lastContact(): number | undefined {
    return this.#lastContactBeforeGap;
  }

  constructor(options: QueueSourceOptions) {
    this.#o = options;
    this.#eventTypes = options.eventTypes;
    this.#lastContactBeforeGap = options.lastContact;
    const { client, dispatcher } = options;
    this.#saved = new StartSaves(dispatcher, options.log, options.savedTypes);
    this.consumer = new QueueConsumer({
      log: options.log,
      clock: options.clock,
      longpollMarginMs: options.longpollMarginMs,
      backoff: options.backoff,
      signal: options.signal,
      onAuthFailed: () => options.onAuthFailed(),
      pacer: new PollPacer({ bucket: client.budget.events, clock: options.clock }),
      api: queueApiFor(
        client,
        async (signal) => {
          // First start: note the newest message BEFORE the queue exists. Taken after, a message
          // sent in between would be both in the queue and at or below the baseline, and dropped.
          if (dispatcher.ledger?.cursor === undefined && wantsMessages(this.#eventTypes)) {
            this.#baselineCandidate = await newestMessageId(client, this.#replayNarrow(), signal);
          }
          this.#registeredTypes = this.#eventTypes;
          return client.events.register(
            registerParams({
              eventTypes: this.#eventTypes,
              narrow: options.narrow,
              allPublicStreams: options.allPublicStreams,
            }),
            { signal },
          );
        },
        options.metrics && ((ms) => options.metrics?.rateLimitWait(ms)),
      ),
      onRegistered: async (reg, reason) => {
        await this.#onRegistered(reg, reason);
        // Event types wanted while this queue was being registered: it lacks them, renewed in turn.
        if (this.#registeredTypes !== this.#eventTypes) this.consumer.renew();
      },
      onEvents: (batch, queueId) => this.#onEvents(batch, queueId),
      acknowledgeAfter: () => this.#saved.saving,
      // Polling acknowledges the events before their handlers finish: harmless, because a new
      // queue (after a crash too) replays messages from the ledger's cursor, not from the queue.
      waitForCapacity: (signal) => dispatcher.onBelow(MAX_IN_FLIGHT, signal),
      hasCapacity: () => dispatcher.inFlight < MAX_IN_FLIGHT,
    });
  }

  async #onRegistered(reg: RegisterResponse, reason: RegisterReason): Promise<void> {
    const o = this.#o;
    const { dispatcher, contexts } = o;
    o.metrics?.queueRegistered(reason);
    contexts.identify(serverInfoFrom(reg), await identityOf(reg, o.client, contexts.self));
    o.onRegistered(reason, reg);
    const ledger = dispatcher.ledger;
    if (ledger === undefined) throw new Error("a queue was registered before the delivery ledger was opened");
    // What a stop or a kill left unfinished runs before the first poll, each among the messages
    // caught up in the order it came (runDue).
    await this.#saved.readAgain();
    const firstEver = ledger.cursor === undefined;
    const since = this.#lastContactBeforeGap;
    this.#lastContactBeforeGap = undefined;
    if (firstEver) {
      if (!wantsMessages(this.#eventTypes) || this.#baselineCandidate === undefined)
        return this.#saved.runDue();
      // Nothing before the baseline is handled; what was sent between it and the registration
      // is replayed (and deduplicated against the queue).
      await ledger.baseline(this.#baselineCandidate);
      // Durable before any message is handled: without it, a restart took a new, later baseline
      // and skipped what the first run had not finished (found by test/e2e/shutdown.test.ts).
      await o.flush();
    }
    // Not awaited: only the messages that may answer a moved question wait for it. Read once the
    // missed messages are fetched and that turn is over, so that it slows neither the catch-up
    // nor the rest of the start down (10,000 waiting questions: ~20 ms of requests to make).
    let caughtUp = () => {};
    const fetched = new Promise<void>((resolve) => {
      caughtUp = resolve;
    });
    // The questions the reactions' catch-up reads are not read again for moves.
    const read = new Map<number, Message>();
    dispatcher.readBackMoves((follow, gone) =>
      fetched.then(nextTurn).then(() => this.#followMovedQuestions(reg, read, follow, gone)),
    );
    try {
      await this.#catchUp(reg, reason, { ledger, firstEver, since, read });
    } finally {
      this.#saved.runDue();
      caughtUp();
    }
  }

  /** The messages missed since the last queue (and reactions, and the gap event), handed to the pipeline. */
  async #catchUp(
    reg: RegisterResponse,
    reason: RegisterReason,
    from: {
      ledger: MessageLedger;
      firstEver: boolean;
      since: number | undefined;
      read: Map<number, Message>;
    },
  ): Promise<void> {
    const o = this.#o;
    const { dispatcher } = o;
    const { ledger, firstEver, since, read } = from;
    const { replayed, skipped, gap } = await catchUp(
      {
        client: o.client,
        ledger,
        narrow: this.#replayNarrow(),
        limits: o.replay,
        eventTypes: this.#eventTypes,
        reason,
        since,
        now: o.clock.now(),
        signal: o.signal,
        accept: (message) => {
          // An event that reached the bot before this message was sent goes first.
          this.#saved.runDue(message.timestamp * 1000);
          const event = { type: "message" as const, message, flags: message.flags ?? [] };
          const fresh = dispatcher.accept({ event, replayed: true, issue: undefined, reply: undefined });
          if (fresh) o.onScheduledMessages(event);
          return fresh;
        },
      },
      firstEver,
    );
    if (replayed > 0) o.metrics?.messagesReplayed(replayed);
    this.#saved.runDue();
    await this.#catchUpReactions(reg, read);
    // A first start missed nothing: no catch-up line, no gap.
    if (firstEver) return;
    o.log.info({ reason, replayed, skipped }, "caught up after a new queue");
    if (gap) {
      o.metrics?.gap();
      dispatcher.dispatchNow(gap);
    }
  }

  async #onEvents(batch: ParsedEvent[], queue: string): Promise<void> {
    const o = this.#o;
    // Accepted in runs (one reading of the clock each), cut where an event tells the source
    // something, and at each event saved until its run is over (accepted alone, with its end).
    let run: Incoming[] = [];
    let saved = false;
    for (let i = 0; i < batch.length; i++) {
      const parsed = batch[i] as ParsedEvent;
      const event = parsed.event;
      const restart = event.type === "restart";
      const scheduled = parsed.known && parsed.event.type === "scheduled_messages";
      const message = event.type === "message";
      if (restart || scheduled) {
        o.dispatcher.acceptAll(run);
        run = [];
        if (restart) {
          o.log.info({ featureLevel: event.zulip_feature_level }, "server restarted");
          // The queue outlives the restart: its event is how the bot learns an upgrade's level.
          const told = parsed.known && parsed.event.type === "restart" ? parsed.event : undefined;
          if (told?.zulip_feature_level !== undefined) {
            o.client.featureLevel = told.zulip_feature_level;
            o.contexts.restarted(told.zulip_version, told.zulip_feature_level);
          }
        }
        if (scheduled) o.onScheduledMessages(parsed.event);
        // Every queue takes restart events (register-params.ts); only a bot that asked sees them.
        if (restart && this.#eventTypes !== null && !this.#eventTypes.includes("restart")) continue;
      } else if (message && parsed.known) o.onScheduledMessages(parsed.event);
      const issue = parsed.known ? undefined : parsed.issue;
      // Made with every field the pipeline sets (`reachedAt` at accept): adding one later gives each
      // waiting event a second object, which a burst's garbage collections copy while it waits.
      const incoming: Incoming = {
        event,
        replayed: false,
        issue,
        reply: undefined,
        queue,
        reachedAt: undefined,
      };
      const key = message || restart ? undefined : this.#saved.keep(parsed, queue);
      if (key === undefined) {
        run.push(incoming);
        continue;
      }
      saved = true;
      o.dispatcher.acceptAll(run);
      run = [];
      this.#saved.accept(incoming, key);
    }
    o.dispatcher.acceptAll(run);
    // Written and committed before the poll that acknowledges the batch (`acknowledgeAfter`).
    if (saved) this.#saved.save();
    this.#lastContactBeforeGap = this.consumer.lastContactAt;
  }

  /**
   * The bot needs events of `type` its queue does not receive (reactions, once a prompt shows
   * emoji choices; deletions and moves, once a question is asked in a channel): the queue is
   * renewed with them, once for the types asked for in the same turn.
   */
  want(type: string): void {
    const types = this.#eventTypes;
    if (types === null || types.includes(type)) return;
    this.#eventTypes = [...types, type];
    if (this.#o.signal.aborted) return;
    this.#wanted.push(type);
    if (this.#wanted.length > 1) return;
    queueMicrotask(() => {
      const wanted = this.#wanted.splice(0);
      if (this.#o.signal.aborted) return;
      this.#o.log.info({ types: wanted }, "renewing the event queue to receive more event types");
      this.consumer.renew();
    });
  }

  /** Event types asked for by {@link want} in this turn, renewed together at its end. */
  readonly #wanted: string[] = [];

  /**
   * Questions moved with their topic while no queue was reading: their dialogs follow; questions
   * deleted meanwhile: their steps end (a failure is logged).
   */
  async #followMovedQuestions(
    reg: RegisterResponse,
    read: ReadonlyMap<number, Message>,
    follow: (move: Move, signal: AbortSignal) => Promise<void>,
    gone: (ids: readonly number[], signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    const o = this.#o;
    const entries = o.dispatcher.dialogs.entries.bind(o.dispatcher.dialogs);
    try {
      const moved = await followMovedQuestions({
        client: o.client,
        featureLevel: reg.zulip_feature_level,
        signal: o.signal,
        waiting: askedInChannels(entries()),
        follow: (move) => follow(move, o.signal),
        read,
        direct: askedIn(entries(), "dm:"),
        channel: askedIn(entries(), "channel:"),
        gone: (ids) => gone(ids, o.signal),
        accept: (message) =>
          o.dispatcher.accept({
            event: { type: "message", message, flags: message.flags ?? [] },
            replayed: true,
            issue: undefined,
            reply: undefined,
          }),
      });
      if (moved > 0)
        o.log.info({ moved }, "waiting questions were moved with their topics: their dialogs follow");
    } catch (err) {
      if (!o.signal.aborted)
        o.log.warn({ err }, "could not read the waiting questions back (moves and deletions)");
    }
  }

  /** Reactions that answer waiting questions, made while no queue was reading (a failure is logged). */
  async #catchUpReactions(reg: RegisterResponse, read: Map<number, Message>): Promise<void> {
    const o = this.#o;
    const buttons = o.dispatcher.dialogs.buttons;
    try {
      const found = await catchUpReactions({
        client: o.client,
        buttons,
        featureLevel: reg.zulip_feature_level,
        signal: o.signal,
        accept: (incoming, onDone) => o.dispatcher.accept(incoming, onDone),
        read,
      });
      if (found > 0) o.log.info({ found }, "caught up reactions that answer waiting questions");
    } catch (err) {
      if (!o.signal.aborted) o.log.warn({ err }, "could not read the waiting questions' reactions back");
    }
  }

  #replayNarrow(): Narrow | undefined {
    return this.#o.narrow && this.#o.narrow.length > 0 ? this.#o.narrow : undefined;
  }
}
