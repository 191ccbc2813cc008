/** What the testing kit's waits say when they give up: the message named, the handler's error. */
import type { BucketSnapshot } from "../api/rate-budget.ts";
import { ApiError } from "../sandbox/http/api-error.ts";
import type { SandboxControl } from "../sandbox/types.ts";
import type { TestMessage } from "./test-message.ts";

const SHOWN = 40;

/** `message 12 ("hi there" from member@sandbox.example in #general > greetings)`. */
export function describeMessage(control: SandboxControl, id: number): string {
  const m = control.messageView(id);
  if (!m) return `message ${id}`;
  const text = m.content.length > SHOWN ? `${m.content.slice(0, SHOWN)}…` : m.content;
  const where =
    m.type === "stream"
      ? `#${m.display_recipient} > ${m.subject}`
      : `a direct message to ${
          m.display_recipient
            .filter((r) => r.id !== m.sender_id)
            .map((r) => r.email)
            .join(", ") || "themselves"
        }`;
  return `message ${id} (${JSON.stringify(text)} from ${m.sender_email} in ${where})`;
}

/**
 * The bot's messages a `nextReply` waited past because its `where` refused them, as the end of
 * its error: ` (\`where\` refused its message 7 ("hi"))`; "" for none.
 */
export function refusedByWhere(messages: readonly TestMessage[]): string {
  if (messages.length === 0) return "";
  const clip = (m: TestMessage) =>
    `${m.id} (${JSON.stringify(m.content.length > SHOWN ? `${m.content.slice(0, SHOWN)}…` : m.content)})`;
  const shown = messages.slice(0, 3).map(clip).join(", ");
  const more = messages.length > 3 ? ` and ${messages.length - 3} more` : "";
  const which = messages.length === 1 ? "message" : "messages";
  return ` (\`where\` refused its ${which} ${shown}${more})`;
}

/** The error of the last "handler failed" log line about message `id`, if any. */
export function handlerFailure(logs: readonly Record<string, unknown>[], id: number): string | undefined {
  for (let i = logs.length - 1; i >= 0; i--) {
    const line = logs[i] as { msg?: unknown; messageId?: unknown; err?: { message?: unknown } };
    if (line.msg === "handler failed" && line.messageId === id)
      return String(line.err?.message ?? "an error");
  }
  return undefined;
}

/**
 * Why message `id` never reached the bot `userId`, if it did not: on a queue, it is not among the
 * message's recipients; run as an outgoing-webhook bot (`webhook`), the server sent it no delivery.
 */
export function notReached(
  control: SandboxControl,
  userId: number,
  id: number,
  webhook: { notSent(id: number): string | undefined } | undefined,
): string | undefined {
  if (webhook) return webhook.notSent(id);
  const flags = control.messages().find((m) => m.id === id)?.flags as Record<string, unknown> | undefined;
  return flags && flags[String(userId)] === undefined
    ? "it is not in that direct message or channel"
    : undefined;
}

/** What {@link silentBecause} reads of a silent bot. */
export interface SilentBot {
  email: string;
  stopped: boolean;
  /** Where the bot's runs begin in the sandbox's request log: its 429s are counted from there. */
  since: number;
  /** Why the message waited on never reached the bot, if it did not. */
  unreached: string | undefined;
  /** The running bot's call budgets (its client's pacing), if it runs. */
  budget: readonly BucketSnapshot[] | undefined;
  /** Whether the bot runs on the test's clock (`runBot({ clock })`, as the fixture's bots do). */
  testClock: boolean;
}

/**
 * Why a bot may have sent nothing, when the kit can tell: the message never reached it, it is
 * stopped, the server refused its calls for the account's rate limit (it then waits for the
 * budget), or, the server having refused none, its calls wait for its own pacing (`rate_limit`).
 */
export function silentBecause(control: SandboxControl, bot: SilentBot): string {
  if (bot.unreached) return ` (the message never reached it: ${bot.unreached})`;
  if (bot.stopped) return " (it is stopped: start() it, and it catches the message up)";
  const onClock = (before: string) => (bot.testClock ? `${before} on the test's clock` : "");
  const refused = control.requests
    .slice(bot.since)
    .filter((r) => r.email === bot.email && r.status === 429).length;
  if (refused > 0)
    return ` (the server refused ${refused} of its calls for the account's rate limit: it waits for the budget${onClock(",")})`;
  // The bucket whose next call waits longest: the event queue's holds back what reaches the bot.
  const held = [...(bot.budget ?? [])].sort((a, b) => b.waitMs - a.waitMs)[0];
  if (!held || held.waitMs <= 0) return "";
  const calls = held.bucket === "events" ? "its event-queue calls wait" : "they wait";
  const used = `${held.perMinute} calls a minute (${held.usedMinute} used) and ${held.perHour} an hour (${held.usedHour} used)`;
  return ` (the server refused none of its calls: ${calls} for its own rate budget (\`rate_limit\`), ${used}, the next in ${Math.ceil(held.waitMs / 1000)} s${onClock("")})`;
}

/** A post the server refused (an unknown channel or person), as `post` or `ask` (`where`) reports it. */
export function refusedSend(err: unknown, where: string, from: string): unknown {
  if (!(err instanceof ApiError)) return err;
  const code = err.wireCode === null ? "" : ` (${err.wireCode})`;
  return new Error(`${where}: the server refused the message from ${from}: ${err.message}${code}`);
}
