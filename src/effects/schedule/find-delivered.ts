/**
 * Was a booking already sent? The server lists only undelivered bookings: one it sent while the
 * bot was down (its answer lost, its time passed) is a message now. It is looked for among the
 * bot's messages to the booking's recipient, read back raw (`apply_markdown=false`) from the
 * newest: one with the booking's content, stamped within `window`. Page after page back (each
 * anchored at the oldest read, that one left out) until the pages reach messages older than the
 * window, the conversation's first message, or the bound: the pages of {@link PAGES}, two calls
 * and 1,100 messages at most (the server gives at most 5,000 a call and advises 1,000 at most).
 */
import type { Client } from "../../api/create-client.ts";
import { isApiError } from "../../api/errors.ts";
import type { NarrowTerm } from "../../api/resources/messages.ts";
import type { ResolvedRecipient } from "./resolve-recipient.ts";

/**
 * The pages' sizes, newest first: the bot was down from the booking to the run again, so the
 * first page mostly holds it; the second covers a bot that said much there since (a dead letter
 * replayed long after). Two calls at most: a read-back never takes a large share of the budget.
 */
const PAGES = [100, 1000] as const;

export interface DeliveredBooking {
  /** Where it went, as ids; `topic` as the server stores it (`""`: the empty topic). */
  target: ResolvedRecipient;
  topic: string;
  /** The content as the server stores it (see normalizeContent). */
  content: string;
  /** Epoch seconds the message's timestamp lies between (both included). */
  window: { from: number; to: number };
  /** Messages that are not it (an earlier booking of the run found sent). */
  taken: ReadonlySet<unknown>;
}

/**
 * What the read-back found: `sentMessageId`, the message the booking became; none, when the
 * bot's messages there reach back past the window without it; `undecided`, when the pages' bound
 * came first (the bot said more there since than is read).
 */
export type Delivered = { sentMessageId: number } | { sentMessageId?: undefined; undecided: boolean };

export async function findDelivered(
  client: Client,
  self: number,
  booking: DeliveredBooking,
  signal?: AbortSignal,
): Promise<Delivered> {
  const { target, topic, content, window, taken } = booking;
  const others = target.kind === "direct" ? target.to.filter((id) => id !== self) : [];
  const where: NarrowTerm[] =
    target.kind === "channel"
      ? [
          { operator: "channel", operand: target.to },
          { operator: "topic", operand: topic },
        ]
      : [{ operator: "dm", operand: others.length > 0 ? others : [self] }];
  let anchor: number | "newest" = "newest";
  let found: number | undefined;
  for (const size of PAGES) {
    // Typed: the anchor the loop sets from the page would make its type circular.
    const page: Awaited<ReturnType<Client["messages"]["get"]>> | undefined = await client.messages
      .get(
        {
          anchor,
          include_anchor: false,
          num_before: size,
          num_after: 0,
          narrow: [...where, { operator: "sender", operand: self }],
          apply_markdown: false,
          allow_empty_topic_name: true,
        },
        signal ? { signal } : {},
      )
      .catch((err: unknown) => {
        // A channel gone since (the narrow refused for it) holds none of the bot's messages.
        if (isApiError(err) && err.code === "BAD_NARROW") return undefined;
        throw err;
      });
    const messages = [...(page?.messages ?? [])].sort((a, b) => a.id - b.id);
    // The oldest in the window: a later same text is likelier the bot's own send since.
    found =
      messages.find(
        (m) =>
          !taken.has(m.id) &&
          m.sender_id === self &&
          m.content === content &&
          m.timestamp >= window.from &&
          m.timestamp <= window.to,
      )?.id ?? found;
    const oldest: { id: number; timestamp: number } | undefined = messages[0];
    if (page === undefined || page.found_oldest || oldest === undefined || oldest.timestamp < window.from) {
      return found === undefined ? { undecided: false } : { sentMessageId: found };
    }
    anchor = oldest.id;
  }
  return found === undefined ? { undecided: true } : { sentMessageId: found };
}
