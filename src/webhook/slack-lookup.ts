/**
 * The Slack-compatible outgoing-webhook form names the channel (`C<stream id>`), the sender
 * (`U<user id>`), the timestamp (whole seconds) and the text, but no message id or topic. The
 * message itself is found through the API, so handlers get the same event as from a queue.
 */
import type { Client } from "../api/create-client.ts";
import type { EventMap } from "../wire/events.ts";
import type { Message } from "../wire/records.ts";

type MessageEvent = EventMap["message"];

/**
 * The pages read, newest first: the message is mostly among the sender's newest few; one the
 * sender posted many more after (a flood, a delivery retried late) costs one more call, not one
 * per 100 messages. 1,000 messages at most.
 */
const PAGES = [100, 900] as const;

/** What a Slack-form delivery says of its message: enough to look it up. */
export interface SlackDelivery {
  channelId: number;
  senderId: number;
  /** When it was sent, in whole seconds. */
  timestamp: number;
  /** The text that triggered the delivery. */
  text: string;
}

/** The form's id fields: each a positive integer, after the letter Slack puts before it (optional). */
const IDS = [
  ["channel_id", "C", "the channel's id"],
  ["user_id", "U", "the sender's id"],
  ["timestamp", "", "the time it was sent, in whole seconds"],
] as const;

/** A positive integer in `value` (a form's text, or a JSON number) after `prefix`, else undefined. */
function positiveInteger(value: unknown, prefix: string): number | undefined {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value : "";
  const digits = text.startsWith(prefix) ? text.slice(prefix.length) : text;
  const n = /^[1-9][0-9]*$/.test(digits) ? Number(digits) : Number.NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** What a field's wrong value was, shown short (a form's field repeated is a list). */
function shown(value: unknown): string {
  if (value === undefined) return "it is missing";
  if (Array.isArray(value)) return "it is given more than once";
  const text = JSON.stringify(value) ?? typeof value;
  return `got ${text.length > 40 ? `${text.slice(0, 39)}…` : text}`;
}

/**
 * The delivery of a Slack-form body, or what is wrong with it (`channel_id: …; it is missing`):
 * `channel_id` (`C<id>`), `user_id` (`U<id>`) and `timestamp` must be positive integers, `text` a
 * non-empty string, else no lookup could find its message.
 */
export function slackDeliveryOf(
  body: Record<string, unknown>,
): { delivery: SlackDelivery; issue?: undefined } | { delivery?: undefined; issue: string } {
  const ids: number[] = [];
  for (const [field, prefix, what] of IDS) {
    const id = positiveInteger(body[field], prefix);
    if (id === undefined)
      return { issue: `${field}: expected ${prefix}<${what}>, a positive integer; ${shown(body[field])}` };
    ids.push(id);
  }
  const { text } = body;
  if (typeof text !== "string" || text === "")
    return { issue: `text: expected the message's text; ${shown(text)}` };
  const [channelId, senderId, timestamp] = ids as [number, number, number];
  return { delivery: { channelId, senderId, timestamp, text } };
}

/**
 * The message a Slack-form delivery is about, as a `message` event carrying the text that
 * triggered the delivery; undefined when it cannot be found (the bot cannot read that channel,
 * the message was deleted or moved away, or the sender posted more than 1,000 messages since).
 */
export async function findSlackMessage(
  client: Client,
  delivery: SlackDelivery,
  signal: AbortSignal,
): Promise<MessageEvent | undefined> {
  const { channelId, senderId, timestamp, text } = delivery;
  const sameSecond: Message[] = [];
  let anchor: "newest" | number = "newest";
  // Newest first, back to the first message older than the delivery's: its second is all seen.
  for (const size of PAGES) {
    const { messages, found_oldest } = await client.messages.get(
      {
        anchor,
        num_before: size,
        num_after: 0,
        ...(anchor === "newest" ? {} : { include_anchor: false }),
        narrow: [
          { operator: "channel", operand: channelId },
          { operator: "sender", operand: senderId },
        ],
        apply_markdown: false,
        allow_empty_topic_name: true,
      },
      { signal },
    );
    sameSecond.unshift(...messages.filter((m) => m.timestamp === timestamp));
    const oldest = messages[0];
    if (oldest === undefined || found_oldest || oldest.timestamp < timestamp) break;
    anchor = oldest.id;
  }
  const found = triggering(sameSecond, text);
  if (!found) return undefined;
  // The handler sees what triggered the delivery, as in the Zulip format, even after an edit.
  return { type: "message", message: { ...found, content: text }, flags: ["mentioned"] };
}

/**
 * Of the sender's messages sent in the delivery's second (oldest first): the first with the
 * delivery's text, else the one edited since (its text is not the one that triggered), if it is
 * the only one.
 */
function triggering(sameSecond: readonly Message[], text: string): Message | undefined {
  const exact = sameSecond.find((m) => m.content === text);
  if (exact) return exact;
  const edited = sameSecond.filter((m) => m.last_edit_timestamp !== undefined);
  return edited.length === 1 ? edited[0] : undefined;
}
