/**
 * Catch-up after a new queue: the messages sent while no queue was listening are fetched with
 * GET /messages from the ledger's cursor and handed to the bot before the new queue's events;
 * what cannot be fetched again is described as a `gap`.
 */
import type { Client } from "../api/create-client.ts";
import type { MessageLedger } from "../pipeline/delivery-ledger.ts";
import type { GapEvent } from "../wire/events.ts";
import type { Message, Narrow } from "../wire/records.ts";
import { fetchHistory } from "./history.ts";
import type { RegisterReason } from "./queue-consumer.ts";

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
    { signal },
  );
  return page.messages.reduce((max: number, m: Message) => Math.max(max, m.id), 0);
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
    const oldestAllowed = (o.now - o.limits.maxAgeMs) / 1000;
    const missed = await fetchHistory(o.client, {
      narrows: [o.narrow ?? []],
      fromId: (o.ledger.cursor ?? 0) + 1,
      limit: Number.POSITIVE_INFINITY,
      signal: o.signal,
    });
    let kept = missed.filter((m) => m.timestamp >= oldestAllowed);
    skipped = missed.length - kept.length;
    if (kept.length > o.limits.maxMessages) {
      skipped += kept.length - o.limits.maxMessages;
      kept = kept.slice(kept.length - o.limits.maxMessages);
    }
    for (const message of kept) if (o.accept(message)) replayed++;
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
