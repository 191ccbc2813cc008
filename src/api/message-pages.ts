/**
 * Messages read back by id, a page at a time: one GET /messages per 1,000 ids (`message_ids`,
 * feature level 300 and later); an older server is asked one message at a time, at most
 * {@link OLD_SERVER_MAX} of them. A message the bot cannot read (deleted, or out of its reach) is
 * absent from its page.
 */
import type { Message } from "../wire/records.ts";
import type { Client } from "./create-client.ts";

const BATCH = 1_000;
/** How many messages an older server is asked for, one call each. */
const OLD_SERVER_MAX = 20;

export function* messagePages(
  o: { client: Client; featureLevel: number; signal: AbortSignal },
  ids: readonly number[],
): Generator<Promise<readonly Message[]>> {
  const signal = o.signal;
  if (o.featureLevel >= 300) {
    for (let i = 0; i < ids.length; i += BATCH)
      yield o.client.messages.byIds(ids.slice(i, i + BATCH), { signal }).then((page) => page.messages);
    return;
  }
  for (const id of ids.slice(0, OLD_SERVER_MAX)) {
    yield o.client.messages
      .get(
        { anchor: id, num_before: 0, num_after: 0, apply_markdown: false, allow_empty_topic_name: true },
        { signal },
      )
      .then((page) => page.messages.filter((m) => m.id === id));
  }
}
