import { BothostError } from "../../errors/bothost-error.ts";
import { codePointLength, truncateCodePoints } from "./code-points.ts";

/**
 * Message content longer than the server's `max_message_length` (which it would silently
 * truncate), with `long_messages: reject` in the bot's config.
 */
export class ContentTooLongError extends BothostError<"CONTENT_TOO_LONG"> {
  override readonly name = "ContentTooLongError";

  constructor(
    readonly length: number,
    readonly limit: number,
  ) {
    super(
      "CONTENT_TOO_LONG",
      `Message content is ${length} characters (Unicode code points), over the server's ` +
        `max_message_length of ${limit}. Shorten it, or set long_messages: split in the bot's ` +
        `config (next to settings:) to send it as several messages.`,
    );
  }
}

/** A topic longer than the server's `max_topic_length`. (The server would silently cut it short.) */
export class TopicTooLongError extends BothostError<"TOPIC_TOO_LONG"> {
  override readonly name = "TopicTooLongError";

  constructor(
    topic: string,
    readonly length: number,
    readonly limit: number,
  ) {
    super(
      "TOPIC_TOO_LONG",
      `Topic "${truncateCodePoints(topic, 30).text}" is ${length} characters (Unicode code points), ` +
        `over the server's max_topic_length of ${limit}; the server would cut it short. Use a topic ` +
        `of at most ${limit} characters.`,
    );
  }
}

/** Throws {@link TopicTooLongError} if `topic`, stripped as the server measures it, is too long. */
export function checkTopic(topic: string, maxTopicLength: number): void {
  const length = codePointLength(topic.trim());
  if (length > maxTopicLength) throw new TopicTooLongError(topic.trim(), length, maxTopicLength);
}
