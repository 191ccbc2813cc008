/**
 * The Slack-compatible outgoing-webhook form names the channel (`C<stream id>`), the sender
 * (`U<user id>`), the timestamp (whole seconds) and the text, but no message id or topic. The
 * message itself is found through the API, so handlers get the same event as from a queue.
 */
import type { Client } from "../api/create-client.ts";
import type { EventMap } from "../wire/events.ts";
import type { Message } from "../wire/records.ts";

type MessageEvent = EventMap["message"];

/** Messages per page, and pages at most: the sender may have posted many more meanwhile. */
const PAGE = 100;
const MAX_PAGES = 10;

/**
 * The message a Slack-form delivery is about, as a `message` event carrying the text that
 * triggered the delivery; undefined when it cannot be found (the bot cannot read that channel,
 * the message was deleted or moved away, or the sender posted more than 1,000 messages since).
 */
export async function findSlackMessage(
  client: Client,
  slack: Record<string, unknown>,
  signal: AbortSignal,
): Promise<MessageEvent | undefined> {
  const channelId = Number(String(slack.channel_id ?? "").replace(/^C/, ""));
  const senderId = Number(String(slack.user_id ?? "").replace(/^U/, ""));
  const timestamp = Number(slack.timestamp);
  if (!Number.isSafeInteger(channelId) || !Number.isSafeInteger(senderId)) return undefined;
  const text = typeof slack.text === "string" ? slack.text : undefined;
  const sameSecond: Message[] = [];
  let anchor: "newest" | number = "newest";
  // Newest first, back to the first message older than the delivery's: its second is all seen.
  for (let page = 0; page < MAX_PAGES; page++) {
    const { messages, found_oldest } = await client.messages.get(
      {
        anchor,
        num_before: PAGE,
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
  const message = text === undefined ? found : { ...found, content: text };
  return { type: "message", message, flags: ["mentioned"] };
}

/**
 * Of the sender's messages sent in the delivery's second (oldest first): the first with the
 * delivery's text, else the one edited since (its text is not the one that triggered), if it is
 * the only one.
 */
function triggering(sameSecond: readonly Message[], text: string | undefined): Message | undefined {
  if (text === undefined) return sameSecond[0];
  const exact = sameSecond.find((m) => m.content === text);
  if (exact) return exact;
  const edited = sameSecond.filter((m) => m.last_edit_timestamp !== undefined);
  return edited.length === 1 ? edited[0] : undefined;
}
