/**
 * Was a booking already sent? The server lists only undelivered bookings: one it sent while the
 * bot was down (its answer lost, its time passed) is a message now. It is looked for among the
 * bot's newest messages to the booking's recipient, read back raw (`apply_markdown=false`): one
 * with the booking's content, stamped within `window`. One call, {@link LOOK_BACK} messages: the
 * bot was down from the booking to the run again, so few of its messages there can be newer.
 */
import type { Client } from "../../api/create-client.ts";
import { isApiError } from "../../api/errors.ts";
import type { NarrowTerm } from "../../api/resources/messages.ts";
import type { ResolvedRecipient } from "./resolve-recipient.ts";

/** How many of the bot's newest messages to the recipient are read. */
const LOOK_BACK = 50;

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

/** The id of the message `booking` became, or undefined when none of the bot's newest there is it. */
export async function findDelivered(
  client: Client,
  self: number,
  booking: DeliveredBooking,
  signal?: AbortSignal,
): Promise<number | undefined> {
  const { target, topic, content, window, taken } = booking;
  const others = target.kind === "direct" ? target.to.filter((id) => id !== self) : [];
  const where: NarrowTerm[] =
    target.kind === "channel"
      ? [
          { operator: "channel", operand: target.to },
          { operator: "topic", operand: topic },
        ]
      : [{ operator: "dm", operand: others.length > 0 ? others : [self] }];
  const page = await client.messages
    .get(
      {
        anchor: "newest",
        num_before: LOOK_BACK,
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
  const sent = (page?.messages ?? [])
    .filter(
      (m) =>
        !taken.has(m.id) &&
        m.sender_id === self &&
        m.content === content &&
        m.timestamp >= window.from &&
        m.timestamp <= window.to,
    )
    .sort((a, b) => a.id - b.id);
  return sent[0]?.id;
}
