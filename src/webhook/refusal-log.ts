/**
 * The operator's view of inbound webhook requests refused for want of room (503: the account's
 * call budget spent, or the bot's handlers all taken): a sender such as GitHub does not retry,
 * so each is a delivery to redeliver. Said at warn, bounded for a flood: a bot's first refusal
 * at once, then one line per {@link REFUSAL_LOG_INTERVAL_MS} with the refusals counted since.
 */
import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../time/clock.ts";

/** The shortest time between two of a bot's refusal lines. */
export const REFUSAL_LOG_INTERVAL_MS = 60_000;

/** Why a request found no room. */
export type RefusalReason = "budget" | "crowded";

interface Pending {
  budget: number;
  crowded: number;
  webhooks: Set<string>;
  timer: TimerHandle;
}

export class RefusalLog {
  /** Bots with a line said within the interval, and what was refused since. */
  readonly #byBot = new Map<string, Pending>();

  constructor(
    private readonly log: Pick<Logger, "warn">,
    private readonly clock: Clock,
  ) {}

  /** Webhook `webhook` of bot `bot` refused a request for `reason`. */
  refused(bot: string, webhook: string, reason: RefusalReason): void {
    const pending = this.#byBot.get(bot);
    if (pending !== undefined) {
      pending[reason]++;
      pending.webhooks.add(webhook);
      return;
    }
    this.#say(bot, { budget: 0, crowded: 0, [reason]: 1 }, [webhook]);
    this.#open(bot);
  }

  /** The listener closes: what was refused since each bot's last line is said now, and no timer is left. */
  close(): void {
    for (const [bot, pending] of this.#byBot) {
      this.clock.clearTimeout(pending.timer);
      if (pending.budget + pending.crowded > 0) this.#say(bot, pending, [...pending.webhooks]);
    }
    this.#byBot.clear();
  }

  /** An interval for `bot`: at its end, what was refused meanwhile is said, and another begins. */
  #open(bot: string): void {
    const timer = this.clock.setTimeout(() => {
      const pending = this.#byBot.get(bot);
      this.#byBot.delete(bot);
      if (pending === undefined || pending.budget + pending.crowded === 0) return;
      this.#say(bot, pending, [...pending.webhooks]);
      this.#open(bot);
    }, REFUSAL_LOG_INTERVAL_MS);
    this.#byBot.set(bot, { budget: 0, crowded: 0, webhooks: new Set(), timer });
  }

  #say(bot: string, counts: { budget: number; crowded: number }, webhooks: string[]): void {
    this.log.warn(
      {
        bot,
        webhooks,
        refused: counts.budget + counts.crowded,
        budget: counts.budget,
        crowded: counts.crowded,
      },
      "webhook requests answered 503 for want of room (budget: the account's call budget spent; crowded: 64 of the bot's handlers under way); the sender must send them again",
    );
  }
}
