/**
 * A Slack-form delivery whose message lookup failed (GET /messages answered 5xx, a reset, the
 * reply deadline passed during it): the server is answered at once without a reply, since any
 * error status or a timeout makes it post "Failure! …" in the conversation (and it never
 * repeats a delivery it got an error status for). The lookup is tried again here, in the
 * background, and the message found is handed to the handlers then; their replies go through
 * the API.
 */
import type { Logger } from "pino";
import { timeoutSignal } from "../api/sleep.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";
import type { EventMap } from "../wire/events.ts";
import type { SlackDelivery } from "./slack-lookup.ts";

type MessageEvent = EventMap["message"];

/**
 * Pauses before each later lookup, each lengthened by up to half at random: 4 to 6 minutes in
 * all, inside the 10 minutes a delivery's answer is kept for repeats, so a handler runs once
 * however the message is found.
 */
export const LATER_LOOKUP_DELAYS_MS = [1_000, 5_000, 15_000, 30_000, 60_000, 120_000] as const;

/** How long one later lookup may take. */
const LOOKUP_TIMEOUT_MS = 30_000;

/**
 * Deliveries one bot keeps looking up at most. A lookup that fails takes up to 4 calls (the
 * client's retries) and a delivery makes at most 4 later lookups in a minute: 5 of them take at
 * most 80 of the account's 200 calls a minute, leaving the rest to the bot's own calls.
 */
const MAX_PENDING_LOOKUPS = 5;

export interface SlackLaterOptions {
  clock: Clock;
  log: Logger;
  /** Finds the delivery's message (undefined: it cannot be found), aborted by `signal`. */
  lookUp(slack: SlackDelivery, signal: AbortSignal): Promise<MessageEvent | undefined>;
  /** Why the bot takes no delivery now, or undefined when it does. */
  unavailable(): string | undefined;
  /** Runs the handlers on the message found; every reply through the API. */
  deliver(event: MessageEvent): void;
}

/** The later lookups of one bot's Slack-form deliveries. */
export class SlackLater {
  readonly #o: SlackLaterOptions;
  /** Deliveries being looked for, by their fields: a repeat of one starts nothing more. */
  readonly #pending = new Map<string, TimerHandle | undefined>();
  #stopped = false;
  /** Aborts the lookups under way when the listener closes. */
  readonly #stopping = new AbortController();
  /** Whether the warning about the cap was logged since the count last fell below it. */
  #capWarned = false;

  constructor(options: SlackLaterOptions) {
    this.#o = options;
  }

  /** Whether the delivery `slack` is looked for already. */
  has(slack: SlackDelivery): boolean {
    return this.#pending.has(keyOf(slack));
  }

  /** Look for the message of `slack` again later, after its first lookup failed with `err`. */
  start(slack: SlackDelivery, err: unknown): void {
    const key = keyOf(slack);
    if (this.#stopped || this.#pending.has(key)) return;
    if (this.#pending.size >= MAX_PENDING_LOOKUPS) {
      if (!this.#capWarned)
        this.#o.log.warn(
          { err, max: MAX_PENDING_LOOKUPS },
          "Slack-format deliveries: looking up their messages failed and too many are looked up again already; answered without a reply, not handled",
        );
      this.#capWarned = true;
      return;
    }
    this.#o.log.warn(
      { err, retries: LATER_LOOKUP_DELAYS_MS.length },
      "Slack-format delivery: looking up its message failed; answered without a reply, the handler runs when a later lookup finds it",
    );
    this.#pending.set(key, undefined);
    this.#next(key, slack, 0);
  }

  /**
   * Drop every later lookup (the listener closes): their pauses cleared, the lookups under way
   * aborted, and one warning that says how many deliveries go unhandled, since the server
   * was answered already and repeats none of them.
   */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#stopping.abort();
    for (const timer of this.#pending.values()) if (timer) this.#o.clock.clearTimeout(timer);
    const pending = this.#pending.size;
    this.#pending.clear();
    if (pending > 0)
      this.#o.log.warn(
        { pending },
        "Slack-format deliveries: the listener closed before their messages were found; not handled",
      );
  }

  /**
   * The lookup after `attempt` failed ones, or the end once none is left. `unavailable`: why the
   * bot took no delivery at the last one (a reload restarting it, its instance losing it).
   */
  #next(key: string, slack: SlackDelivery, attempt: number, unavailable?: string): void {
    const pause = LATER_LOOKUP_DELAYS_MS[attempt];
    if (pause === undefined) {
      this.#drop(key);
      if (unavailable !== undefined)
        this.#o.log.warn(
          { reason: unavailable, attempts: attempt },
          "Slack-format delivery: the bot took no deliveries at any later lookup; not handled",
        );
      else
        this.#o.log.error(
          { attempts: attempt },
          "Slack-format delivery: its message could not be looked up after every retry; not handled",
        );
      return;
    }
    // Lengthened by up to half at random: deliveries that failed together do not retry together.
    const delay = pause * (1 + Math.random() / 2);
    const timer = this.#o.clock.setTimeout(() => void this.#attempt(key, slack, attempt), delay);
    this.#pending.set(key, timer);
  }

  async #attempt(key: string, slack: SlackDelivery, attempt: number): Promise<void> {
    if (this.#stopped || this.#notNow(key, slack, attempt)) return;
    const deadline = timeoutSignal(this.#o.clock, LOOKUP_TIMEOUT_MS);
    let event: MessageEvent | undefined;
    try {
      event = await this.#o.lookUp(slack, AbortSignal.any([deadline.signal, this.#stopping.signal]));
    } catch (err) {
      this.#o.log.debug({ err, attempt: attempt + 1 }, "Slack-format delivery: a later lookup failed");
      if (!this.#stopped) this.#next(key, slack, attempt + 1);
      return;
    } finally {
      deadline.clear();
    }
    // The bot may have begun to stop during the lookup: it takes no deliveries until it is back.
    if (this.#stopped || this.#notNow(key, slack, attempt)) return;
    this.#drop(key);
    if (!event) {
      this.#o.log.warn("Slack-format delivery: the message could not be found through the API; not handled");
      return;
    }
    this.#o.log.info(
      { messageId: event.message.id, attempt: attempt + 1 },
      "Slack-format delivery: its message found by a later lookup",
    );
    this.#o.deliver(event);
  }

  /** The delivery `key` is no longer looked for: below the cap, the next one over it warns again. */
  #drop(key: string): void {
    this.#pending.delete(key);
    if (this.#pending.size < MAX_PENDING_LOOKUPS) this.#capWarned = false;
  }

  /**
   * Whether the bot takes no deliveries now (a reload restarting it, say): then the delivery is
   * looked up again at the next pause, and dropped only when none is left.
   */
  #notNow(key: string, slack: SlackDelivery, attempt: number): boolean {
    const unavailable = this.#o.unavailable();
    if (unavailable === undefined) return false;
    this.#o.log.debug(
      { reason: unavailable, attempt: attempt + 1 },
      "Slack-format delivery: the bot takes no deliveries now; its message is looked up again later",
    );
    this.#next(key, slack, attempt + 1, unavailable);
    return true;
  }
}

/** What tells one Slack-form delivery from another (it carries no message id). */
function keyOf(slack: SlackDelivery): string {
  return JSON.stringify([slack.channelId, slack.senderId, slack.timestamp, slack.text]);
}
