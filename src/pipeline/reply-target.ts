/**
 * Where `ctx.reply()` sends: the conversation an event happened in. Channel messages answer in
 * the same channel and topic; direct messages answer to everyone in the conversation but the bot.
 */
import { BothostError } from "../errors/bothost-error.ts";
import { type AnyEvent, isTypedEvent } from "../wire/events.ts";

type ReplyTarget = { type: "channel"; to: number; topic: string } | { type: "direct"; to: number[] };

class ReplyError extends BothostError<"REPLY_NO_CONVERSATION"> {
  override readonly name = "ReplyError";
}

/**
 * The conversation of any typed event that has one; a clear error for those that do not (and for
 * an unknown event, whose fields cannot be trusted: `issue` is why it failed its schema).
 */
export function replyTarget(event: AnyEvent, issue: string | undefined, botUserId: number): ReplyTarget {
  if (isTypedEvent(event, issue)) {
    if (event.type === "message") {
      const message = event.message;
      if (message.type === "stream") {
        if (message.stream_id === undefined) {
          throw new ReplyError(
            "REPLY_NO_CONVERSATION",
            `message ${message.id} has no stream_id; cannot reply to it.`,
          );
        }
        return { type: "channel", to: message.stream_id, topic: message.subject };
      }
      const people = Array.isArray(message.display_recipient)
        ? message.display_recipient.map((u) => u.id)
        : [];
      const others = people.filter((id) => id !== botUserId);
      return { type: "direct", to: others.length > 0 ? others : [botUserId] };
    }
    if (event.type === "update_message" && event.stream_id !== undefined) {
      const topic = event.subject ?? event.orig_subject;
      if (topic !== undefined) return { type: "channel", to: event.stream_id, topic };
    }
  }
  const what =
    issue === undefined ? `a "${event.type}" event` : `a "${event.type}" event that failed its schema`;
  throw new ReplyError(
    "REPLY_NO_CONVERSATION",
    `ctx.reply() needs an event that happened in a conversation (a message, or a channel message edit); ` +
      `this is ${what}. Use ctx.send({ type, to, topic, content }) to say where.`,
  );
}
