/**
 * What the chat server POSTs to an outgoing-webhook bot (NOTES §12), in either format: the Zulip
 * JSON body (with the whole message) or the Slack-compatible form (a few fields, no message id).
 */
import type { Client } from "../api/create-client.ts";
import { type EventMap, parseEvent } from "../wire/events.ts";

/** A `message` event built from a payload, as the bot's queue would have delivered it (id -1). */
export type OutgoingMessageEvent = EventMap["message"];

export type OutgoingPayload =
  | { format: "zulip"; token: unknown; event: OutgoingMessageEvent | undefined; issue?: string }
  | { format: "slack"; token: unknown; slack: Record<string, unknown> };

/** Tell the two formats apart by shape: only the Zulip one carries a `message` object. */
export function readOutgoingPayload(body: unknown): OutgoingPayload | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if ("message" in b) {
    const trigger = b.trigger;
    // Only a real mention triggers a channel message; a DM trigger carries no mention flag.
    const flags = trigger === "mention" ? ["mentioned"] : [];
    const parsed = parseEvent({ id: -1, type: "message", message: b.message, flags });
    if (!parsed.known) {
      return { format: "zulip", token: b.token, event: undefined, issue: parsed.issue ?? "not a message" };
    }
    return { format: "zulip", token: b.token, event: parsed.event as OutgoingMessageEvent };
  }
  if ("text" in b || "channel_id" in b) return { format: "slack", token: b.token, slack: b };
  return undefined;
}

/**
 * The Slack form names the channel (`C<stream id>`), sender (`U<user id>`), timestamp and text
 * but no message id or topic; find the message itself so handlers get the same event as from a
 * queue. Undefined when it cannot be found (e.g. the bot cannot read that channel).
 */
export async function findSlackMessage(
  client: Client,
  slack: Record<string, unknown>,
  signal: AbortSignal,
): Promise<OutgoingMessageEvent | undefined> {
  const streamId = Number(String(slack.channel_id ?? "").replace(/^C/, ""));
  const senderId = Number(String(slack.user_id ?? "").replace(/^U/, ""));
  const timestamp = Number(slack.timestamp);
  if (!Number.isSafeInteger(streamId) || !Number.isSafeInteger(senderId)) return undefined;
  const page = await client.messages.get(
    {
      anchor: "newest",
      num_before: 20,
      num_after: 0,
      narrow: [
        { operator: "channel", operand: streamId },
        { operator: "sender", operand: senderId },
      ],
      apply_markdown: false,
      allow_empty_topic_name: true,
    },
    { signal },
  );
  const found = [...page.messages]
    .reverse()
    .find((m) => m.timestamp === timestamp && (typeof slack.text !== "string" || m.content === slack.text));
  if (!found) return undefined;
  return { id: -1, type: "message", message: found, flags: ["mentioned"] };
}
