/**
 * The server's normal forms of content and topic, so a booking we hold can be compared with the
 * copy the server lists (it drops trailing whitespace and leading blank lines, trims topics and
 * reads "(no topic)" as the empty topic).
 */
import { createHash } from "node:crypto";
import { featureLevels } from "../../wire/feature-levels.ts";
import { CUT_CONTENT_ENDING, strippedContent, truncate } from "../../wire/stored-content.ts";

/** The empty topic's display name when the server's is not known (its default, and what it reads on input). */
export const EMPTY_TOPIC_NAME = "general chat";

/**
 * `content` as the server stores it: stripped, and cut to `maxLength` (its `max_message_length`)
 * when that is given.
 */
export function normalizeContent(content: string, maxLength?: number): string {
  const stripped = strippedContent(content);
  return maxLength === undefined ? stripped : truncate(stripped, maxLength, CUT_CONTENT_ENDING);
}

export function normalizeTopic(topic: string | undefined, emptyTopicName: string): string {
  const t = (topic ?? "").trim();
  return t === "(no topic)" || t === emptyTopicName ? "" : t;
}

/**
 * The topic a channel message sent or booked with `topic` is stored under. From feature level 334
 * the server reads "(no topic)" and its empty topic's display name as the empty topic `""`; before
 * it, there is no empty topic: it keeps those two as named topics (and refuses `""`).
 */
export function storedTopic(
  topic: string | undefined,
  emptyTopicName: string,
  featureLevel?: number,
): string {
  return featureLevel !== undefined && featureLevel < featureLevels.emptyTopicValid
    ? (topic ?? "").trim()
    : normalizeTopic(topic, emptyTopicName);
}

/** A short, stable digest of a value, for change detection (not for secrets). */
export function digest(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 24);
}

/** Whole UNIX seconds at or after `ms`: rounding down could put a time just in the past. */
export function toSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}
