/**
 * A conversation history source: the messages of one or more narrows, fetched with GET /messages
 * in anchored pages and merged oldest first, in the shape the event queue's message events have
 * (raw Markdown, empty topics kept). What `bothost backtest` runs a bot over.
 */
import type { Client } from "../api/create-client.ts";
import type { NarrowTerm } from "../api/resources/messages.ts";
import type { Message } from "../wire/records.ts";
import { replayMessageFormat } from "./register-params.ts";

/** Messages per request: few requests, well within the server's 5,000 and its rate limit. */
const PAGE = 1000;

export interface HistoryRange {
  /** One narrow per fetch (a channel each, say); their messages are merged. `[[]]`: everything. */
  narrows: readonly (readonly NarrowTerm[])[];
  /** Epoch seconds: only messages sent at or after it. */
  since?: number;
  /** Only messages with this id or a later one. */
  fromId?: number;
  /** At most this many messages, the newest of the range (with `fromId`, the oldest). */
  limit: number;
  signal?: AbortSignal;
  /** Told the running count after each page. */
  onPage?(fetched: number): void;
}

/** The range's messages, oldest first, without duplicates. */
export async function fetchHistory(client: Client, range: HistoryRange): Promise<Message[]> {
  const byId = new Map<number, Message>();
  let fetched = 0;
  const counted = (n: number) => {
    fetched += n;
    range.onPage?.(fetched);
  };
  for (const narrow of range.narrows) {
    const messages =
      range.fromId !== undefined
        ? await forward(client, narrow, range.fromId, range, counted)
        : await backward(client, narrow, range, counted);
    for (const m of messages) byId.set(m.id, m);
  }
  const all = [...byId.values()].sort((a, b) => a.id - b.id);
  return range.fromId !== undefined ? all.slice(0, range.limit) : all.slice(-range.limit);
}

async function backward(
  client: Client,
  narrow: readonly NarrowTerm[],
  range: HistoryRange,
  counted: (n: number) => void,
): Promise<Message[]> {
  const out: Message[] = [];
  let anchor: "newest" | number = "newest";
  for (;;) {
    const page = await client.messages.get(
      {
        anchor,
        num_before: PAGE,
        num_after: 0,
        include_anchor: anchor === "newest",
        narrow,
        ...replayMessageFormat,
      },
      range.signal ? { signal: range.signal } : {},
    );
    const older = page.messages
      .filter((m) => anchor === "newest" || m.id < anchor)
      .sort((a, b) => b.id - a.id);
    counted(older.length);
    for (const m of older) {
      if (range.since !== undefined && m.timestamp < range.since) return out;
      out.push(m);
      if (out.length >= range.limit) return out;
    }
    const oldest = older.at(-1);
    if (!oldest || page.found_oldest) return out;
    anchor = oldest.id;
  }
}

async function forward(
  client: Client,
  narrow: readonly NarrowTerm[],
  fromId: number,
  range: HistoryRange,
  counted: (n: number) => void,
): Promise<Message[]> {
  const out: Message[] = [];
  let anchor = fromId;
  let first = true;
  for (;;) {
    const page = await client.messages.get(
      { anchor, num_before: 0, num_after: PAGE, include_anchor: first, narrow, ...replayMessageFormat },
      range.signal ? { signal: range.signal } : {},
    );
    const newer = page.messages
      .filter((m) => m.id > anchor || (first && m.id === anchor))
      .sort((a, b) => a.id - b.id);
    counted(newer.length);
    first = false;
    for (const m of newer) {
      if (range.since !== undefined && m.timestamp < range.since) continue;
      out.push(m);
      if (out.length >= range.limit) return out;
    }
    const newest = newer.at(-1);
    if (!newest || page.found_newest) return out;
    anchor = newest.id;
  }
}
