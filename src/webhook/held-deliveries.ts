/**
 * Outgoing-webhook deliveries that come while their bot is not ready (starting: registering,
 * setting up; or stopping: a reload's restart, a stop of the bot alone). An error status would
 * make the server post "Failure! Third party responded with …" in the conversation and never
 * retry, so a delivery is held until the bot is ready, within what is left of its reply
 * deadline. One still not ready at its deadline is answered without a reply and kept here, up to
 * {@link HELD_LATE_CAP}, to be handed over once the bot is ready (its replies go through the API).
 * Answered, it is never delivered again by the server: when the listener closes first (the daemon
 * stops), each one kept is written as a dead letter marked for replay, which the next start runs.
 */
import type { Logger } from "pino";
import type { Clock } from "../time/clock.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { WebhookRuntime } from "./webhook-runtime.ts";

/** The most deliveries kept for later per bot; past it, the newest are not taken (the server retries them). */
export const HELD_LATE_CAP = 100;

/** How a wait for the bot ended: it is ready; the time given ran out; the listener closes. */
export type HoldOutcome = "ready" | "late" | "closed";

/**
 * One delivery kept for later: what identifies it in logs, what hands it to the bot, and the
 * message event it carries (none for a Slack-format one: its message is not looked up yet).
 */
interface Late {
  messageId: number | undefined;
  run: () => void;
  event: ServerEvent | undefined;
}

export class HeldDeliveries {
  readonly #waiters = new Set<(outcome: HoldOutcome) => void>();
  readonly #late: Late[] = [];
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #runtime: () => WebhookRuntime;
  #unsubscribe: (() => void) | undefined;
  #closed = false;
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
   * Keep a delivery answered without a reply, to `run` once the bot is ready. False when
   * {@link HELD_LATE_CAP} are kept already (or the listener closes): the newest is not taken.
   */
  keep(messageId: number | undefined, run: () => void, event?: ServerEvent): boolean {
    if (this.#closed) return false;
    if (this.ready()) {
      run();
      return true;
    }
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
    this.#late.push({ messageId, run, event });
    return true;
  }

  /**
   * The listener closes: every wait ends "closed"; each delivery kept is written as a dead letter
   * marked for replay (resolves once written); one that cannot be is reported, not handled.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe?.();
    for (const finish of [...this.#waiters]) finish("closed");
    const lost: Late[] = [];
    const kept: string[] = [];
    for (const late of this.#late.splice(0)) {
      const id = await this.#keepForNextStart(late);
      if (id === undefined) lost.push(late);
      else kept.push(id);
    }
    if (kept.length > 0) {
      this.#log.warn(
        { count: kept.length, deadLetters: kept },
        "outgoing webhook: deliveries answered while the bot was not ready are kept as dead letters, replayed at the next start: the listener closed before it was ready",
      );
    }
    if (lost.length > 0) {
      this.#log.error(
        { count: lost.length, messageIds: lost.map((l) => l.messageId).filter((id) => id !== undefined) },
        "outgoing webhook: deliveries answered while the bot was not ready were not handled: the listener closed before it was ready",
      );
    }
  }

  /** The dead letter `late` is kept as; undefined when it is not (Slack format, no store, a failure). */
  async #keepForNextStart(late: Late): Promise<string | undefined> {
    if (late.event === undefined) return undefined;
    try {
      return await this.#runtime().keepForNextStart(late.event);
    } catch (err) {
      this.#log.error({ err, messageId: late.messageId }, "outgoing webhook: could not keep a delivery");
      return undefined;
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
    for (const l of late) l.run();
  }
}
