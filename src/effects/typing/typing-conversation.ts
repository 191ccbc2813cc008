/**
 * Which conversation a typing event is about (NOTES §4.3): a direct conversation is its set of
 * participants, sender included; a stream conversation is the stream id plus the topic, compared
 * case-insensitively as the server does.
 */
import type { EventMap } from "../../wire/events.ts";

export type TypingEvent = EventMap["typing"];

export type TypingConversation =
  | { type: "direct"; userIds: readonly number[] }
  | { type: "stream"; streamId: number; topic: string };

/**
 * The conversation of a typing event, or `undefined` if the event lacks what identifies one
 * (a stream event without `stream_id` or `topic`).
 *
 * @example
 * ```ts
 * typingConversation(event); // { type: "direct", userIds: [8, 10] } — sorted, sender included
 * ```
 */
export function typingConversation(event: TypingEvent): TypingConversation | undefined {
  if (event.message_type === "direct") {
    // The server already appends the sender to `recipients`; adding it again keeps us correct anyway.
    const ids = new Set([event.sender.user_id, ...(event.recipients ?? []).map((r) => r.user_id)]);
    return { type: "direct", userIds: [...ids].sort((a, b) => a - b) };
  }
  if (event.stream_id === undefined || event.topic === undefined) return undefined;
  return { type: "stream", streamId: event.stream_id, topic: event.topic };
}

/**
 * A string that is equal for the same conversation: sorted, de-duplicated ids for direct
 * conversations; stream id and lower-cased topic for streams.
 *
 * @example
 * ```ts
 * conversationKey({ type: "stream", streamId: 5, topic: "Lunch" }); // "stream:5:lunch"
 * conversationKey({ type: "direct", userIds: [10, 8] }); // "direct:8,10"
 * ```
 */
export function conversationKey(conversation: TypingConversation): string {
  if (conversation.type === "direct") {
    return `direct:${[...new Set(conversation.userIds)].sort((a, b) => a - b).join(",")}`;
  }
  return `stream:${conversation.streamId}:${conversation.topic.toLowerCase()}`;
}
