/**
 * Where `ctx.reply()` sends: the conversation an event happened in. Channel messages answer in
 * the same channel and topic; direct messages answer to everyone in the conversation but the bot.
 */
import { BothostError } from "../errors/bothost-error.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { Message } from "../wire/records.ts";

type ReplyTarget = { type: "channel"; to: number; topic: string } | { type: "direct"; to: number[] };

class ReplyError extends BothostError<"REPLY_NO_CONVERSATION"> {
  override readonly name = "ReplyError";
}

/** The conversation of any event that has one; a clear error for those that do not. */
export function replyTarget(event: ServerEvent, botUserId: number): ReplyTarget {
  if (event.type === "message" && typeof event.message === "object" && event.message !== null) {
    const message = event.message as Message;
    if (message.type === "stream") {
      if (message.stream_id === undefined) {
        throw new ReplyError(
          "REPLY_NO_CONVERSATION",
          `message ${message.id} has no stream_id; cannot reply to it.`,
        );
      }
      return { type: "channel", to: message.stream_id, topic: message.subject };
    }
    const people = Array.isArray(message.display_recipient) ? message.display_recipient.map((u) => u.id) : [];
    const others = people.filter((id) => id !== botUserId);
    return { type: "direct", to: others.length > 0 ? others : [botUserId] };
  }
  if (event.type === "update_message" && typeof event.stream_id === "number") {
    const topic = typeof event.subject === "string" ? event.subject : event.orig_subject;
    if (typeof topic === "string") return { type: "channel", to: event.stream_id, topic };
  }
  throw new ReplyError(
    "REPLY_NO_CONVERSATION",
    `ctx.reply() needs an event that happened in a conversation (a message, or a channel message edit); ` +
      `this is a "${event.type}" event. Use ctx.send({ type, to, topic, content }) to say where.`,
  );
}
