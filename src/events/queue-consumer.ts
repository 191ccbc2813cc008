/**
 * The long-poll loop of one bot's event queue: register, poll, acknowledge, and recover from
 * everything the server and the network do. It never routes: it hands each batch of events to
 * `onEvents` (the bot's one dispatch path) and waits for capacity before polling again.
 */
import { AUTH_REJECTED, isApiError, isAuthError, isNetworkError, isRateLimitError } from "../api/errors.ts";
import { backoffDelay, sleep } from "../api/sleep.ts";
import { nextTurn } from "../time/clock.ts";
import { type ParsedEvent, parseEvent } from "../wire/events.ts";
import { graceAfter, REGISTER_GRACE_MS } from "./grace-after.ts";
import { PollOutage } from "./poll-outage.ts";
import type { PollPacer } from "./poll-pacing.ts";
import type { ConsumerState, QueueConsumerOptions, RegisterReason } from "./queue-consumer-options.ts";
import { UnknownEventWarnings } from "./unknown-events.ts";

/** Batches of at most this many events are dispatched before the next poll is sent. */
const SMALL_BATCH = 8;

export type { QueueConsumerOptions, RegisterReason } from "./queue-consumer-options.ts";

const FALLBACK_LONGPOLL_SECONDS = 90;
/**
 * How long a poll sent again after a failure must stay unanswered before it counts as parked by
 * a live server: longer than a refused connection, a 5xx or a connect timeout (10 s) take.
 */
const RETRY_GRACE_MS = 15_000;

export class QueueConsumer {
  #opts: QueueConsumerOptions;
  /** The poll pacing, for the status and metrics. */
  get pacer(): PollPacer | undefined {
    return this.#opts.pacer;
  }
  /** Ours to abort in `stop()`, when no `signal` was given. */
  readonly #abort: AbortController | undefined;
  readonly #signal: AbortSignal;
  #loop: Promise<void> | undefined;
  // Public for reading (the bot's status); only the consumer writes them.
  state: ConsumerState = "idle";
  queueId: string | null = null;
  /** The first registration, while `start()` waits for it. */
  #starting: Promise<boolean> | undefined;
  /** When the current queue was registered. */
  registeredAt: number | undefined;
  /** How many times a queue was registered (the first included). */
  registrations = 0;
  lastHeartbeatAt: number | undefined;
  /** When the server last answered a poll or a registration. */
  lastContactAt: number | undefined;
  /**
   * A request failed and none was answered since, and the poll sent again is younger than
   * RETRY_GRACE_MS (not ready): one a live server parks counts as answered after that.
   */
  get retrying(): boolean {
    return this.#failures > 0 && this.#opts.clock.now() - this.#sentAt < RETRY_GRACE_MS;
  }
  /** The server's long-poll timeout plus the margin: the longest a healthy poll can take. */
  longpollMs = FALLBACK_LONGPOLL_SECONDS * 1000;
  #lastEventId = -1;
  #failures = 0;
  readonly #outage = new PollOutage();
  /** Queues lost in a row (expired, acknowledgement refused) with no poll answered in between. */
  #lost = 0;
  /** When the last poll was sent. */
  #sentAt = 0;
  #fatal: unknown;
  #pendingReason: RegisterReason | undefined;
  /** The poll sent ahead while the previous batch was dispatched (see `hasCapacity`). */
  #ahead: { queueId: string; events: Promise<unknown[]> } | undefined;
  /** Warns of events kept as unknown, at most once a minute per type. */
  readonly #unknown: UnknownEventWarnings;

  constructor(opts: QueueConsumerOptions) {
    this.#opts = opts;
    this.#unknown = new UnknownEventWarnings(opts.log, opts.clock);
    if (opts.signal) this.#signal = opts.signal;
    else {
      this.#abort = new AbortController();
      this.#signal = this.#abort.signal;
    }
  }

  /** Register the first queue, then keep polling in the background. Rejects on a 401. */
  async start(): Promise<void> {
    if (this.#loop || this.#starting) throw new Error("QueueConsumer.start() was called twice");
    this.#starting = this.#register("start");
    const registered = await this.#starting;
    if (!registered) {
      this.#loop = Promise.resolve();
      if (this.#fatal) throw this.#fatal;
      return;
    }
    this.#loop = this.#run();
  }

  /** Delete the queue and register anew (other event types) once the poll under way returns. */
  renew(): void {
    const old = this.queueId;
    if (old === null) return;
    this.#ahead = undefined;
    this.#dropQueue("event_types");
    this.#opts.api.deleteQueue(old).catch(() => {});
  }

  /** Stop polling, wait for the loop to end, and delete the queue on the server. */
  async stop(): Promise<void> {
    if (this.state === "stopped") return;
    const wasFatal = this.state === "auth_failed";
    if (this.#abort) this.#abort.abort(new Error("bot stopping"));
    else if (!this.#signal.aborted)
      throw new Error("QueueConsumer.stop(): abort the `signal` it was given first");
    this.#setState("stopping");
    // A registration under way at the stop ends first: the queue it made is deleted below.
    await this.#starting?.catch(() => {});
    await this.#loop;
    const queueId = this.queueId;
    this.queueId = null;
    if (queueId && !wasFatal) await this.#deleteQueue(queueId);
    this.#setState(wasFatal ? "auth_failed" : "stopped");
  }

  // One suspended frame per parked poll: the loop awaits the poll's promise itself, and a batch
  // that needs no dispatch (a heartbeat) sends the next poll at once.
  async #run(): Promise<void> {
    const signal = this.#signal;
    while (!signal.aborted && this.state !== "auth_failed") {
      const queueId = this.queueId;
      if (queueId === null) {
        const reason = this.#pendingReason ?? "queue_expired";
        this.#pendingReason = undefined;
        // A queue lost before any poll of it was answered: each registration waits longer (0.5-1 s
        // doubling to 30-60 s), so a server that drops every new queue does not spend the budget.
        const spacing = this.#lost > 1 ? Math.min(60_000, 1000 * 2 ** (this.#lost - 2)) : 0;
        if (spacing > 0) await this.#wait(spacing * (0.5 + Math.random() / 2), signal);
        await this.#register(reason);
        continue;
      }
      try {
        let ahead = this.#ahead;
        this.#ahead = undefined;
        if (ahead?.queueId !== queueId) {
          await this.#opts.waitForCapacity(signal);
          ahead = this.#send(queueId, signal);
        }
        this.#setState("polling");
        const dispatched = this.#take(await ahead.events, queueId, signal);
        if (dispatched) await dispatched;
      } catch (err) {
        if (signal.aborted) break;
        // A poll of a queue renewed meanwhile: however it ended, the next queue is registered.
        if (this.queueId !== queueId) continue;
        await this.#onPollError(err, signal);
      }
    }
  }

  /**
   * Parse a poll's answer and hand its events over; what is returned settles when they are
   * dispatched (nothing for a batch of heartbeats only). Reading ahead acknowledges a batch before
   * its handlers ran: harmless, as a new queue replays messages from the delivery ledger, the other
   * events are saved first (`acknowledgeAfter`), and at most one batch beyond the capacity is held.
   */
  #take(raw: unknown[], queueId: string, signal: AbortSignal): Promise<void> | undefined {
    this.lastContactAt = this.#opts.clock.now();
    this.#failures = this.#lost = this.#outage.answered(this.#failures, this.#opts);
    const batch: ParsedEvent[] = [];
    let others = false; // events other than messages: saved before the poll acknowledging them
    for (let i = 0; i < raw.length; i++) {
      const parsed = parseEvent(raw[i]);
      if (parsed.event.id > this.#lastEventId) this.#lastEventId = parsed.event.id;
      const type = parsed.event.type;
      if (type === "heartbeat") {
        this.lastHeartbeatAt = this.lastContactAt;
        continue;
      }
      if (type !== "message") others = true;
      if (!parsed.known && parsed.issue) this.#unknown.note(type, parsed.issue);
      batch.push(parsed);
    }
    if (batch.length === 0) return this.#readAhead(queueId, signal);
    // A large batch of messages: the next poll goes out first, so the server prepares it while
    // this one is dispatched. A small one (or one with other events, saved first) is dispatched in
    // far less than a poll's round trip: its handlers' first calls (a reply) go out first, and the
    // next poll one event-loop turn later.
    if (batch.length > SMALL_BATCH && !others) {
      this.#readAhead(queueId, signal);
      return this.#opts.onEvents(batch, queueId);
    }
    const dispatched = this.#opts.onEvents(batch, queueId);
    // Its failure is met by the caller's await; until then it must not count as unhandled.
    dispatched.catch(() => {});
    return nextTurn().then(() => {
      this.#readAhead(queueId, signal);
      return dispatched;
    });
  }

  /** Send the next poll now, while there is capacity for its batch. */
  #readAhead(queueId: string, signal: AbortSignal): undefined {
    if (this.#opts.hasCapacity?.() && !signal.aborted && this.queueId === queueId)
      this.#ahead = this.#send(queueId, signal);
  }

  #send(queueId: string, signal: AbortSignal): { queueId: string; events: Promise<unknown[]> } {
    const poll = () => {
      this.#sentAt = this.#opts.clock.now();
      return this.#opts.api.poll(queueId, this.#lastEventId, { signal, timeoutMs: this.longpollMs });
    };
    // Under sustained traffic the pacer holds the poll a little, so that it brings a batch.
    const pacer = this.#opts.pacer;
    const wait = pacer?.take() ?? 0;
    const paced = () => (pacer && wait > 0 ? pacer.hold(wait, signal).then(poll) : poll());
    const saving = this.#opts.acknowledgeAfter?.(); // the events it acknowledges, saved first
    const events = saving === undefined ? paced() : saving.then(paced);
    // Its failure is handled when the loop takes it; until then it must not count as unhandled.
    events.catch(() => {});
    return { queueId, events };
  }

  async #onPollError(err: unknown, signal: AbortSignal): Promise<void> {
    const log = this.#opts.log;
    if (isAuthError(err)) return this.#failFatally(err);
    if (isApiError(err) && err.code === "BAD_EVENT_QUEUE_ID") {
      log.warn({ queueId: this.queueId }, "event queue expired on the server; registering a new one");
      return this.#dropQueue("queue_expired");
    }
    if (isApiError(err) && err.status === 400 && /pruned|was not in this queue/.test(err.msg)) {
      log.warn(
        { queueId: this.queueId, msg: err.msg },
        "server rejected the acknowledgement; re-registering",
      );
      return this.#dropQueue("ack_rejected");
    }
    if (isNetworkError(err) && err.timedOut) {
      log.warn(
        { queueId: this.queueId, waitedMs: this.longpollMs },
        "no heartbeat within the long-poll timeout; re-registering",
      );
      const stale = this.queueId;
      this.#dropQueue("watchdog");
      if (stale) this.#opts.api.deleteQueue(stale).catch(() => {});
      return;
    }
    if (isRateLimitError(err)) {
      log.warn({ waitMs: err.retryAfterMs }, "rate limited while polling; waiting as the server asks");
      return this.#wait(err.retryAfterMs, signal);
    }
    return this.#backOff(err, signal);
  }

  #dropQueue(reason: RegisterReason): void {
    this.#lost++;
    this.queueId = null;
    this.#pendingReason = reason;
  }

  async #backOff(err: unknown, signal: AbortSignal): Promise<void> {
    this.#failures++;
    const { initialMs = 500, maxMs = 30_000 } = this.#opts.backoff ?? {};
    const delay = backoffDelay(this.#failures, initialMs, maxMs, Math.random);
    this.#opts.log[this.#outage.failed(this.#opts.clock)](
      { attempt: this.#failures, delayMs: Math.round(delay), err: describe(err) },
      "event queue request failed; backing off",
    );
    this.#setState("backing_off");
    await this.#wait(delay, signal);
  }

  async #wait(ms: number, signal: AbortSignal): Promise<void> {
    // An abort ends the wait; the loop condition then ends the run.
    await sleep(this.#opts.clock, ms, signal).catch(() => {});
  }

  /** Register a queue, retrying transient failures; false when stopped or fatally failed. */
  async #register(reason: RegisterReason): Promise<boolean> {
    const signal = this.#signal;
    while (!signal.aborted) {
      this.#setState("registering");
      // A registration under way at the stop may finish (a moment): the queue it made is then
      // known, and deleted below, instead of left on the server with its reply cut off.
      const grace = graceAfter(signal, REGISTER_GRACE_MS, this.#opts.clock);
      try {
        const reg = await this.#opts.api.register(grace.signal).finally(grace.dispose);
        if (signal.aborted) {
          // Made as the bot stopped: not kept on the server, and said as a stop's queue is.
          if (reg.queue_id) await this.#deleteQueue(reg.queue_id);
          return false;
        }
        this.lastContactAt = this.#opts.clock.now();
        this.#failures = this.#outage.answered(this.#failures, this.#opts);
        this.registrations++;
        this.#opts.pacer?.resume();
        this.queueId = reg.queue_id;
        this.registeredAt = this.#opts.clock.now();
        this.#lastEventId = reg.last_event_id;
        const serverSeconds = reg.event_queue_longpoll_timeout_seconds ?? FALLBACK_LONGPOLL_SECONDS;
        this.longpollMs = serverSeconds * 1000 + (this.#opts.longpollMarginMs ?? 10_000);
        this.#opts.log.info(
          {
            queueId: reg.queue_id,
            reason,
            featureLevel: reg.zulip_feature_level,
            lastEventId: reg.last_event_id,
          },
          "event queue registered",
        );
        try {
          await this.#opts.onRegistered(reg, reason);
        } catch (err) {
          // Catch-up failed: drop this queue rather than leak it, and register afresh.
          this.queueId = null;
          if (reg.queue_id) await this.#deleteQueue(reg.queue_id);
          throw err;
        }
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        if (isAuthError(err)) {
          this.#failFatally(err);
          return false;
        }
        if (isRateLimitError(err)) await this.#wait(err.retryAfterMs, signal);
        else await this.#backOff(err, signal);
      }
    }
    return false;
  }

  async #deleteQueue(queueId: string): Promise<void> {
    const { api, log } = this.#opts;
    await api.deleteQueue(queueId).then(
      () => log.info({ queueId }, "event queue deleted"),
      (err) => log.warn({ queueId, err: describe(err) }, "could not delete the event queue"),
    );
  }

  #failFatally(err: unknown): void {
    this.#fatal = err;
    this.queueId = null;
    this.#opts.log.error(
      { err: describe(err), fix: AUTH_REJECTED },
      "authentication failed; this bot is stopped",
    );
    this.#setState("auth_failed");
    this.#opts.onAuthFailed?.();
  }

  #setState(state: ConsumerState): void {
    if (this.state === state) return;
    const from = this.state;
    this.state = state;
    const quiet = (from === "polling" && state === "registering") || state === "polling";
    if (!quiet) this.#opts.log.debug({ from, to: state }, "queue consumer state");
  }
}

const describe = (err: unknown): string => (err instanceof Error ? err.message : String(err));
