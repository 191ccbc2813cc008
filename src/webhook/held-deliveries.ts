/**
 * Outgoing-webhook deliveries that come while their bot is not ready (starting: registering,
 * setting up; or stopping: a reload's restart, a stop of the bot alone). An error status would
 * make the server post "Failure! Third party responded with …" in the conversation and never
 * retry, so a delivery is held until the bot is ready, within what is left of its reply
 * deadline. One still not ready at its deadline is kept, up to {@link HELD_LATE_CAP}, and then
 * answered without a reply. Answered, it is never delivered again by the server, so it is kept
 * before it is answered: written (flushed) as a dead letter marked for replay, which the bot's
 * dead-letter source runs once the bot is ready, at this start or, after a stop or a kill, the
 * next. A delivery the store does not take is not answered: its connection is closed, so that
 * the server retries it. Only a delivery with no message event in hand (Slack format, looked up
 * once the bot is ready), or one of a bot keeping no dead letters, is kept in memory alone.
 */
import type { Logger } from "pino";
import type { Clock } from "../time/clock.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { WebhookRuntime } from "./webhook-runtime.ts";

/** The most deliveries kept for later per bot; past it, the newest are not taken (the server retries them). */
export const HELD_LATE_CAP = 100;

/** How a wait for the bot ended: it is ready; the time given ran out; the listener closes. */
export type HoldOutcome = "ready" | "late" | "closed";

/** A delivery to keep: what identifies it in logs and what hands it to the bot. */
export interface Delivery {
  messageId: number | undefined;
  /** Hands it to the bot (kept in memory alone, or its letter not written). */
  run: () => void;
  /** Its message event, to write as a dead letter; none for a Slack-format one not looked up yet. */
  event?: ServerEvent;
  /** Called once the bot is ready when its letter was written (the letter's replay runs it). */
  lettered?: () => void;
}

/** Where a delivery kept is: its dead letter's id; "memory" alone; "failed": the store refused it. */
type Kept = string | "memory" | "failed";

/** One delivery kept for later, and where it is kept (pending while its letter is written). */
interface Late {
  delivery: Delivery;
  kept: Promise<Kept>;
}

export class HeldDeliveries {
  readonly #waiters = new Set<(outcome: HoldOutcome) => void>();
  readonly #late: Late[] = [];
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #runtime: () => WebhookRuntime;
  #unsubscribe: (() => void) | undefined;
  #closed = false;
  /** Messages whose letter's write failed (it may have landed): a retry of one looks for it first. */
  readonly #refused = new Set<number>();
  /** Whether the cap was said to be reached since the deliveries kept were last handed over. */
  #warned = false;

  /** `runtime`: the bot's current runtime (a reload may swap it: then call {@link rebind}). */
  constructor(o: { clock: Clock; log: Logger; runtime: () => WebhookRuntime }) {
    this.#clock = o.clock;
    this.#log = o.log;
    this.#runtime = o.runtime;
    this.rebind();
  }

  /** Whether the bot takes deliveries now. */
  ready(): boolean {
    return this.#runtime().status.state === "webhook";
  }

  /** Follow the bot's current runtime (after a reload swapped it). */
  rebind(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = this.#runtime().onReady(() => this.#becameReady());
    if (this.ready()) this.#becameReady();
  }

  /** Wait up to `ms` for the bot to be ready. */
  wait(ms: number): Promise<HoldOutcome> {
    if (this.#closed) return Promise.resolve("closed");
    if (this.ready()) return Promise.resolve("ready");
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => finish("late"), Math.max(0, ms));
      const finish = (outcome: HoldOutcome) => {
        this.#clock.clearTimeout(timer);
        this.#waiters.delete(finish);
        resolve(outcome);
      };
      this.#waiters.add(finish);
    });
  }

  /**
   * Keep a delivery to be answered without a reply, to run once the bot is ready; resolves once
   * it is kept (its dead letter written). False when it is not taken: {@link HELD_LATE_CAP} are
   * kept already, the store refused its letter, or the listener closes. A repeat of a delivery
   * kept is taken (true) and runs nothing more.
   */
  async keep(delivery: Delivery): Promise<boolean> {
    if (this.#closed) return false;
    if (this.ready()) {
      delivery.run();
      return true;
    }
    const { messageId } = delivery;
    const first =
      messageId === undefined ? undefined : this.#late.find((l) => l.delivery.messageId === messageId);
    // A repeat is answered as its first: taken once that one is.
    if (first) return (await first.kept) !== "failed";
    if (this.#late.length >= HELD_LATE_CAP) {
      if (!this.#warned) {
        this.#warned = true;
        this.#log.warn(
          { cap: HELD_LATE_CAP },
          "outgoing webhook: too many deliveries wait for the bot to be ready; newer ones are not taken, their connection is closed so the server retries them",
        );
      }
      return false;
    }
    const late: Late = { delivery, kept: this.#write(delivery) };
    this.#late.push(late);
    if ((await late.kept) !== "failed") return true;
    // Taken over meanwhile by the bot being ready, it runs now; else the server retries it.
    const waiting = this.#late.indexOf(late);
    if (waiting >= 0) this.#late.splice(waiting, 1);
    return waiting < 0 && !this.#closed;
  }

  /**
   * The listener closes: every wait ends "closed"; the deliveries kept (their letters written
   * already) are counted in one warning; those kept in memory alone are reported, not handled.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe?.();
    for (const finish of [...this.#waiters]) finish("closed");
    const lost: Late[] = [];
    const kept: string[] = [];
    for (const late of this.#late.splice(0)) {
      const where = await late.kept;
      // A letter refused: the delivery is not answered, its connection is closed (the server retries).
      if (where === "memory") lost.push(late);
      else if (where !== "failed") kept.push(where);
    }
    if (kept.length > 0) {
      this.#log.warn(
        { count: kept.length, deadLetters: kept },
        "outgoing webhook: deliveries answered while the bot was not ready are kept as dead letters, replayed at the next start: the listener closed before it was ready",
      );
    }
    if (lost.length > 0) {
      this.#log.error(
        {
          count: lost.length,
          messageIds: lost.map((l) => l.delivery.messageId).filter((id) => id !== undefined),
        },
        "outgoing webhook: deliveries answered while the bot was not ready were not handled: the listener closed before it was ready",
      );
    }
  }

  /** Write `delivery` as a dead letter marked for replay, where the store takes it. */
  async #write(delivery: Delivery): Promise<Kept> {
    const { event, messageId } = delivery;
    if (event === undefined) return "memory";
    try {
      const again = messageId !== undefined && this.#refused.has(messageId);
      const id = await this.#runtime().keepDelivery(event, { again });
      if (messageId !== undefined) this.#refused.delete(messageId);
      return id ?? "memory";
    } catch (err) {
      if (messageId !== undefined && this.#refused.size < HELD_LATE_CAP) this.#refused.add(messageId);
      this.#log.error(
        { err, messageId: delivery.messageId },
        "outgoing webhook: could not keep a delivery (its dead letter was refused); its connection is closed so that the server retries it",
      );
      return "failed";
    }
  }

  #becameReady(): void {
    if (this.#closed) return;
    for (const finish of [...this.#waiters]) finish("ready");
    const late = this.#late.splice(0);
    this.#warned = false;
    if (late.length > 0) {
      this.#log.info(
        { count: late.length },
        "outgoing webhook: the bot is ready; handling the deliveries it was not ready for",
      );
    }
    // One kept as a letter is run by the letter's replay; the others here.
    for (const { delivery, kept } of late) {
      void kept.then((where) => {
        if (where === "memory" || where === "failed") delivery.run();
        else delivery.lettered?.();
      });
    }
  }
}
