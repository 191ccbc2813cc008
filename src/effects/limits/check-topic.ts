import { codePointLength } from "./code-points.ts";
import { TopicTooLongError } from "./limit-errors.ts";

/**
 * Throws {@link TopicTooLongError} (`TOPIC_TOO_LONG`) if `topic` is longer than `maxTopicLength`
 * code points. Like the server, it measures the topic with surrounding whitespace stripped.
 *
 * @example
 * ```ts
 * checkTopic(topic, register.max_topic_length ?? 60);
 * ```
 */
export function checkTopic(topic: string, maxTopicLength: number): void {
  const length = codePointLength(topic.trim());
  if (length > maxTopicLength) throw new TopicTooLongError(topic.trim(), length, maxTopicLength);
}
