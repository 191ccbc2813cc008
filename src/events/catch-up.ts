/**
 * Catch-up after a new queue: the messages sent while no queue was listening are fetched with
 * GET /messages from the ledger's cursor and handed to the bot before the new queue's events;
 * what cannot be fetched again is described as a `gap`.
 */
import type { Client } from "../api/create-client.ts";
import type { MessageLedger } from "../pipeline/delivery-ledger.ts";
import type { GapEvent } from "../wire/events.ts";
import type { Message, Narrow } from "../wire/records.ts";
import type { RegisterReason } from "./queue-consumer.ts";
import { replayMessageFormat } from "./register-params.ts";

export interface ReplayLimits {
  /** At most this many messages are replayed; older ones beyond it become a gap. */
  maxMessages: number;
  /** Messages older than this (by server timestamp) are not replayed; they become a gap. */
  maxAgeMs: number;
}

export interface CatchUpOptions {
  client: Client;
  ledger: MessageLedger;
  narrow: Narrow | undefined;
  limits: ReplayLimits;
  /** The bot's subscribed event types (`null`: all). */
  eventTypes: readonly string[] | null;
  reason: RegisterReason;
  /** When the server was last heard from on the old queue. */
  since: number | undefined;
  /** Now, in epoch ms: `maxAgeMs` counts back from it. */
  now: number;
  signal: AbortSignal;
  /** Hand one replayed message to the bot; false when it was a duplicate or the bot's own. */
  accept(message: Message): boolean;
}

export const wantsMessages = (eventTypes: readonly string[] | null): boolean =>
  eventTypes === null || eventTypes.includes("message");

/** The id of the newest message the bot can see (0 when none): the starting point of a first start. */
export async function newestMessageId(
  client: Client,
  narrow: Narrow | undefined,
  signal: AbortSignal,
): Promise<number> {
  const page = await client.messages.get(
    { anchor: "newest", num_before: 1, num_after: 0, narrow },
    { signal, lane: "background" },
  );
  return page.messages.reduce((max: number, m: Message) => Math.max(max, m.id), 0);
}

/** Messages per GET /messages of the catch-up. */
const PAGE = 1000;

/**
 * The missed messages to replay, oldest first. Most catch-ups miss a few: one read forward from
 * the cursor gets them all, and nothing the bot handled before. When that read does not reach the
 * newest message, more than a page was missed: the rest are read back from the newest, a page at
 * a time, down to what the first read holds or to the first message past the limits (older than
 * `maxAgeMs`, or beyond the newest `maxMessages`), so what would be thrown away is never fetched:
 * at most `ceil(maxMessages / PAGE) + 2` calls, however many were missed. `skipped` counts the
 * missed messages read but not kept; when paging back stopped at the limits, those between were
 * not read, so it is then a lower bound (at least 1).
 */
async function fetchMissed(o: CatchUpOptions): Promise<{ kept: Message[]; skipped: number }> {
  const cursor = o.ledger.cursor ?? 0;
  const oldestAllowed = (o.now - o.limits.maxAgeMs) / 1000;
  const read = (anchor: "newest" | number, before: number, after: number) =>
    o.client.messages.get(
      {
        anchor,
        num_before: before,
        num_after: after,
        include_anchor: anchor === "newest",
        narrow: o.narrow,
        ...replayMessageFormat,
      },
      { signal: o.signal, lane: "background" },
    );
  const newestFirst = (messages: Message[], above: number) =>
    messages.filter((m) => m.id > above).sort((a, b) => b.id - a.id);
  const kept: Message[] = [];
  let skipped = 0;
  let past = false;
  // Newest first: once one message is past the limits, every older one is.
  const take = (m: Message) => {
    past ||= m.timestamp < oldestAllowed || kept.length >= o.limits.maxMessages;
    if (past) skipped++;
    else kept.push(m);
  };
  const ahead = await read(cursor, 0, PAGE);
  const first = newestFirst(ahead.messages, cursor);
  if (!ahead.found_newest) {
    const floor = first[0]?.id ?? cursor;
    let anchor: "newest" | number = "newest";
    while (!past) {
      const page = await read(anchor, PAGE, 0);
      const batch = newestFirst(page.messages, floor).filter((m) => anchor === "newest" || m.id < anchor);
      for (const m of batch) take(m);
      const last = batch.at(-1);
      if (!last || page.found_oldest || page.messages.some((m) => m.id <= floor)) break;
      anchor = last.id;
    }
  }
  for (const m of first) take(m);
  return { kept: kept.reverse(), skipped };
}

/**
 * Replay what was missed since the ledger's cursor, within the limits: when more than
 * `maxMessages` were missed, the newest are replayed and the oldest counted as skipped. On a first
 * start (`firstEver`) the cursor is the baseline read before the queue existed: no gap then.
 * `gap` is also undefined when nothing could have been missed (a message-only bot without skips).
 */
export async function catchUp(
  o: CatchUpOptions,
  firstEver: boolean,
): Promise<{ replayed: number; skipped: number; gap: GapEvent | undefined }> {
  let replayed = 0;
  let skipped = 0;
  if (wantsMessages(o.eventTypes) && o.limits.maxMessages > 0) {
    const missed = await fetchMissed(o);
    skipped = missed.skipped;
    for (const message of missed.kept) if (o.accept(message)) replayed++;
  }
  if (firstEver) return { replayed, skipped, gap: undefined };
  const otherTypes = (o.eventTypes ?? ["*"]).filter((t) => t !== "message");
  const gap: GapEvent | undefined =
    otherTypes.length > 0 || skipped > 0
      ? {
          type: "gap",
          reason: o.reason === "start" ? "restart" : o.reason,
          since: o.since,
          eventTypes: otherTypes,
          replayedMessages: replayed,
          skippedMessages: skipped,
        }
      : undefined;
  return { replayed, skipped, gap };
}
