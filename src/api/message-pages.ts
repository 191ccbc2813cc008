/**
 * Messages read back by id, a page at a time: one GET /messages per 1,000 ids (`message_ids`,
 * feature level 300 and later); an older server is asked one message at a time, at most
 * {@link OLD_SERVER_MAX} of them. A page lists the messages the bot holds (sent or received, and
 * still has): one deleted is absent, and so is one moved to a channel the bot is not subscribed
 * to. With {@link PUBLIC_CHANNELS} (feature level 300 and later) a page lists those in public
 * channels instead, held or not.
 */
import { z } from "zod";
import { Message } from "../wire/records.ts";
import type { CallLane } from "./budget-line.ts";
import type { Client } from "./create-client.ts";
import type { NarrowTerm } from "./resources/messages.ts";

const BATCH = 1_000;
/** How many messages an older server is asked for, one call each. */
const OLD_SERVER_MAX = 20;

/** The narrow under which a read by ids finds the messages of every public channel, held or not. */
export const PUBLIC_CHANNELS: readonly NarrowTerm[] = [{ operator: "channels", operand: "public" }];

const Page = z.looseObject({ messages: z.array(Message) });

export function* messagePages(
  o: {
    client: Client;
    featureLevel: number;
    signal: AbortSignal;
    narrow?: readonly NarrowTerm[];
    /** The budget's lane of the reads (budget-line.ts); default the signal's. */
    lane?: CallLane;
  },
  ids: readonly number[],
): Generator<Promise<readonly Message[]>> {
  const signal = o.signal;
  const lane = o.lane === undefined ? {} : { lane: o.lane };
  if (o.featureLevel >= 300) {
    for (let i = 0; i < ids.length; i += BATCH) {
      const page = ids.slice(i, i + BATCH);
      // The typed method takes no narrow: the same call, with one.
      const read = o.narrow
        ? o.client.request(
            "GET",
            "/messages",
            { message_ids: page, narrow: o.narrow, apply_markdown: false, allow_empty_topic_name: true },
            { signal, schema: Page, ...lane },
          )
        : o.client.messages.byIds(page, { signal, ...lane });
      yield read.then((body) => body.messages);
    }
    return;
  }
  if (o.narrow) return;
  for (const id of ids.slice(0, OLD_SERVER_MAX)) {
    yield o.client.messages
      .get(
        { anchor: id, num_before: 0, num_after: 0, apply_markdown: false, allow_empty_topic_name: true },
        { signal, ...lane },
      )
      .then((page) => page.messages.filter((m) => m.id === id));
  }
}
