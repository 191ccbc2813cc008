/**
 * Catch-up after a new queue: fetch the messages missed since the ledger's cursor and hand them
 * to the bot before the new queue's events; describe what cannot be fetched again as a `gap`.
 */
import type { Client } from "../api/create-client.ts";
import type { DeliveryLedger } from "../pipeline/delivery-ledger.ts";
import type { Message, Narrow } from "../wire/records.ts";
import type { RegisterReason } from "./queue-consumer.ts";
import { collectMissed, type ReplayLimits } from "./replay.ts";

/** A gap: events the bot may have missed and that cannot be fetched again (reactions, edits…). */
export interface GapEvent {
  id: -1;
  type: "gap";
  reason: RegisterReason | "restart";
  /** When the server was last heard from before the gap (ms since epoch), if known. */
  since: number | undefined;
  /** Event types other than messages that were not delivered during the gap. */
  eventTypes: string[];
  replayedMessages: number;
  /** Messages missed but not replayed because of the replay limits. */
  skippedMessages: number;
  [key: string]: unknown;
}

/**
 * GET /messages parameters that give messages the shape the queue delivers them in: raw
 * Markdown, "" topics kept, gravatar URLs left to the client (the endpoint defaults to HTML).
 */
export interface MessageFormat {
  apply_markdown: boolean;
  client_gravatar: boolean;
  allow_empty_topic_name: boolean;
}

export interface CatchUpOptions {
  client: Client;
  ledger: DeliveryLedger;
  narrow: Narrow | undefined;
  limits: ReplayLimits;
  format: MessageFormat;
  /** The bot's subscribed event types (`null`: all). */
  eventTypes: readonly string[] | null;
  reason: RegisterReason;
  /** When the server was last heard from on the old queue. */
  since: number | undefined;
  signal: AbortSignal;
  /** Hand one replayed message to the bot; false when it was a duplicate or the bot's own. */
  accept(message: Message): boolean;
}

export interface CatchUpResult {
  replayed: number;
  skipped: number;
  /** Present unless nothing could have been missed (a first start, or a message-only bot without skips). */
  gap: GapEvent | undefined;
}

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
 * Replay what was missed since the ledger's cursor. On a first start (`firstEver`) the cursor is
 * the baseline read before the queue existed, and no gap is reported.
 */
export async function catchUp(o: CatchUpOptions, firstEver: boolean): Promise<CatchUpResult> {
  const wantsMessages = o.eventTypes === null || o.eventTypes.includes("message");
  let replayed = 0;
  let skipped = 0;
  if (wantsMessages && o.limits.maxMessages > 0) {
    const result = await collectMissed(
      (anchor, numAfter, signal) =>
        o.client.messages.get(
          {
            anchor,
            num_before: 0,
            num_after: numAfter,
            include_anchor: false,
            narrow: o.narrow,
            ...o.format,
          },
          { signal },
        ),
      o.ledger.cursor ?? 0,
      o.limits,
      Date.now(),
      o.signal,
    );
    skipped = result.skipped;
    for (const message of result.messages) if (o.accept(message)) replayed++;
  }
  if (firstEver) return { replayed, skipped, gap: undefined };
  const otherTypes = (o.eventTypes ?? ["*"]).filter((t) => t !== "message");
  const gap: GapEvent | undefined =
    otherTypes.length > 0 || skipped > 0
      ? {
          id: -1,
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
