/**
 * What `ctx.send` and `ctx.reply` do before sending (NOTES §7): the server silently truncates
 * content over `max_message_length` and topics over `max_topic_length`, so a topic that is too
 * long is refused here (`TOPIC_TOO_LONG`) and long content is split at paragraph boundaries and
 * sent as several messages, in order (or refused with `CONTENT_TOO_LONG` under `reject`).
 */
import type { SendMessageParams } from "../../api/resources/messages.ts";
import { checkTopic } from "./check-topic.ts";
import { type LongMessagePolicy, splitContent } from "./split-content.ts";

export interface MessageLimits {
  maxMessageLength: number;
  maxTopicLength: number;
  /** `split` (default) sends long content as several messages; `reject` throws CONTENT_TOO_LONG. */
  longMessages: LongMessagePolicy;
}

/**
 * Sends `params` through `send`, within the server's limits. Resolves the id of the first
 * message sent. Nothing is sent when the topic or (under `reject`) the content is too long; if
 * a later part of a split message fails, the parts before it stay sent and the error is thrown.
 *
 * @example
 * ```ts
 * await sendWithinLimits((p) => client.messages.send(p), { type: "channel", to: "ops", topic: "report", content: long },
 *   { maxMessageLength: 10_000, maxTopicLength: 60, longMessages: "split" });
 * ```
 */
export async function sendWithinLimits(
  send: (params: SendMessageParams) => Promise<{ id: number }>,
  params: SendMessageParams,
  limits: MessageLimits,
): Promise<{ id: number }> {
  if ((params.type === "channel" || params.type === "stream") && typeof params.topic === "string") {
    checkTopic(params.topic, limits.maxTopicLength);
  }
  const parts = splitContent(params.content, limits.maxMessageLength, { mode: limits.longMessages });
  let first: { id: number } | undefined;
  for (const content of parts) {
    const sent = await send({ ...params, content });
    first ??= sent;
  }
  // Only blank content over the limit splits into nothing; send it as it is and let the server answer.
  return first ?? send(params);
}
