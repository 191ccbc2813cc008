/**
 * Did a send happen? After an ambiguous failure the server may have stored the message, so the
 * bot's messages in the conversation are read back (raw Markdown): one with the same content (as
 * the server stores it), newer than `newer.after` (a message id) and no older than `newer.since`
 * (epoch seconds), is the send. It was made after message `after`, so it is looked for from
 * there forward (anchored at that id): among the bot's first messages there after it, however
 * many it said there since.
 * Without an id, back from the newest until the messages are older than `since`. One call, a
 * second when the first page holds neither the send nor the end: at most
 * {@link FIRST_PAGE} + {@link NEXT_PAGE} messages, well within the account's rate limit (a
 * read-back follows only a send whose answer was lost). A channel that does not exist holds none
 * of the bot's messages: the narrow naming it, refused, finds nothing.
 */
import type { Client } from "../api/create-client.ts";
import { isApiError } from "../api/errors.ts";
import type { NarrowTerm, SendMessageParams } from "../api/resources/messages.ts";
import type { CallOptions } from "../api/transport.ts";
import { EMPTY_TOPIC_NAME, normalizeContent, storedTopic } from "./schedule/normalize.ts";

/** The first page: the send is among the bot's first few messages there after `after`. */
const FIRST_PAGE = 100;
/** The second page, read only when the first holds neither the send nor the end. */
const NEXT_PAGE = 1000;
/** With neither an id nor a time to bound it, only the newest: an older same text is likelier another message. */
const UNBOUNDED = 20;

export async function findSent(
  api: Client,
  selfId: number,
  params: SendMessageParams,
  newer: { after: number | undefined; since?: number | undefined },
  /** The reads' signal, or their options (a lane of the budget without a signal). */
  call?: AbortSignal | Pick<CallOptions, "signal" | "lane">,
  /**
   * Which content counts as the send's: by default `params.content` as the server stores it
   * (trailing whitespace and leading newlines stripped: see normalizeContent).
   */
  matches: (content: string) => boolean = sameAs(normalizeContent(params.content)),
): Promise<{ id: number; content: string } | undefined> {
  const where: NarrowTerm[] =
    params.type === "stream" || params.type === "channel"
      ? [
          { operator: "channel", operand: params.to },
          { operator: "topic", operand: sentTopic(api, params.topic) },
        ]
      : [{ operator: "dm", operand: dmOperand(params.to as readonly number[] | readonly string[]) }];
  const narrow = [...where, { operator: "sender", operand: selfId }];
  const { after, since } = newer;
  const isSend = (m: { id: number; content: string; timestamp: number }) =>
    matches(m.content) &&
    (after === undefined || m.id > after) &&
    (since === undefined || m.timestamp >= since);
  // A message id bounds the send from below (0 or less is none: no server message has one).
  const forward = after !== undefined && after > 0;
  let anchor: number | "newest" = forward ? after : "newest";
  const sizes = forward || since !== undefined ? [FIRST_PAGE, NEXT_PAGE] : [UNBOUNDED];
  for (const size of sizes) {
    const page = await api.messages
      .get(
        {
          anchor,
          include_anchor: false,
          num_before: forward ? 0 : size,
          num_after: forward ? size : 0,
          narrow,
          apply_markdown: false,
        },
        call instanceof AbortSignal ? { signal: call } : (call ?? {}),
      )
      .catch((err: unknown) => {
        if (noSuchChannel(err)) return undefined;
        throw err;
      });
    if (page === undefined) return undefined;
    const messages = [...page.messages].sort((a, b) => a.id - b.id);
    // The first one after the bound, as sent in order.
    const sent = messages.find(isSend);
    if (sent) return { id: sent.id, content: sent.content };
    const [oldest, newest] = [messages[0], messages.at(-1)];
    if (forward ? page.found_newest || !newest : page.found_oldest || !oldest) return undefined;
    // Going back, past the time it came after: it is not older still.
    if (!forward && since !== undefined && oldest!.timestamp < since) return undefined;
    anchor = forward ? newest!.id : oldest!.id;
  }
  return undefined;
}

/**
 * The server refused the narrow for its channel: none of that name (or id) exists. Told by the
 * error's `desc`, which the server does not translate: `unknown channel …` (`unknown stream …`
 * before Zulip 9.0). An operator the server does not know (`unknown operator …`) is not this.
 */
function noSuchChannel(err: unknown): boolean {
  const desc = isApiError(err) && err.code === "BAD_NARROW" ? err.data.desc : undefined;
  return typeof desc === "string" && /^unknown (channel|stream) /.test(desc);
}

/**
 * The topic to narrow to: the one the message is stored under. From feature level 334 a send to
 * "(no topic)" or the empty topic's display name is stored under `""`, which a narrow to `""`
 * finds; a narrow to "(no topic)" would not (the server rewrites only the display name in
 * narrows). The server's display name on input is always "general chat".
 */
function sentTopic(api: Client, topic: string | undefined): string {
  return storedTopic(topic, EMPTY_TOPIC_NAME, api.featureLevel);
}

function dmOperand(to: readonly number[] | readonly string[]): string | readonly number[] {
  return to.every((x) => typeof x === "number") ? (to as readonly number[]) : to.join(",");
}

/** True for `stored` alone (made once per read-back, not once per message read). */
function sameAs(stored: string): (content: string) => boolean {
  return (content) => content === stored;
}
