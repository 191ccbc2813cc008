/**
 * Which of the bots that took one account in turns (one stopped, another run with the same email,
 * the first started again) sent each of the account's messages: the one that took the account
 * last before the message was sent, as no two bots run on one account at once (bot-names.ts); and
 * a message the server sent at a scheduled time is the one's that took the account last before
 * that scheduled message was made, whichever bot runs (if any) when the server sends it.
 */
import type { Sandbox } from "../sandbox/types.ts";

/** One bot's turn on the account: who took it, and the highest ids there were then. */
interface Turn {
  bot: object;
  message: number;
  scheduled: number;
}

/** Per sandbox, each account's turns, in the order they began. */
const turnsOf = new WeakMap<Sandbox, Map<string, Turn[]>>();

const highest = (records: Record<string, unknown>[], key: string) =>
  records.reduce((n, r) => Math.max(n, Number(r[key])), 0);

/** What one bot (`bot`: its identity) on account `email`, user `userId`, reads of its turns. */
export interface AccountTurns {
  /** The bot takes the account now: the account's messages from now on are its own. */
  begin(): void;
  /** The account's messages that are the bot's, as the sandbox stores them, in id order. */
  sent(): Record<string, unknown>[];
}

export function accountTurns(sandbox: Sandbox, email: string, userId: number, bot: object): AccountTurns {
  const byAccount = turnsOf.get(sandbox) ?? new Map<string, Turn[]>();
  turnsOf.set(sandbox, byAccount);
  const turns = byAccount.get(email) ?? [];
  byAccount.set(email, turns);
  const { control } = sandbox;
  /** The bot whose turn it was when the id after `key`'s highest was `id`. */
  const holder = (id: number, key: "message" | "scheduled") => {
    for (let i = turns.length - 1; i >= 0; i--) if (turns[i]![key] < id) return turns[i]!.bot;
    return undefined;
  };
  return {
    begin() {
      turns.push({
        bot,
        message: highest(control.messages(), "id"),
        scheduled: highest(control.scheduled(), "scheduled_message_id"),
      });
    },
    sent() {
      // A message the server sent at its scheduled time → the scheduled message it came from.
      const scheduledAs = new Map<unknown, number>();
      for (const s of control.scheduled())
        if (s.delivered_message_id != null)
          scheduledAs.set(s.delivered_message_id, Number(s.scheduled_message_id));
      return control.messages().filter((m) => {
        if (m.sender_id !== userId) return false;
        const scheduled = scheduledAs.get(m.id);
        return (
          (scheduled === undefined ? holder(Number(m.id), "message") : holder(scheduled, "scheduled")) === bot
        );
      });
    },
  };
}
