/**
 * A conversation history source: the messages of one or more narrows, fetched with GET /messages
 * in anchored pages and merged oldest first, in the shape the event queue's message events have
 * (raw Markdown, empty topics kept). What `bothost backtest` runs a bot over, and what a new queue
 * catches up on.
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
    for (const m of await fetchNarrow(client, narrow, range, counted)) byId.set(m.id, m);
  }
  const all = [...byId.values()].sort((a, b) => a.id - b.id);
  return range.fromId !== undefined ? all.slice(0, range.limit) : all.slice(-range.limit);
}

/** One narrow's messages, paging back from the newest, or forward from `fromId` when given. */
async function fetchNarrow(
  client: Client,
  narrow: readonly NarrowTerm[],
  range: HistoryRange,
  counted: (n: number) => void,
): Promise<Message[]> {
  const forward = range.fromId !== undefined;
  const out: Message[] = [];
  let anchor: "newest" | number = range.fromId ?? "newest";
  let first = true;
  for (;;) {
    const page = await client.messages.get(
      {
        anchor,
        num_before: forward ? 0 : PAGE,
        num_after: forward ? PAGE : 0,
        include_anchor: first,
        narrow,
        ...replayMessageFormat,
      },
      range.signal ? { signal: range.signal } : {},
    );
    const batch = page.messages
      .filter(
        (m) => anchor === "newest" || (forward ? m.id > anchor || (first && m.id === anchor) : m.id < anchor),
      )
      .sort((a, b) => (forward ? a.id - b.id : b.id - a.id));
    counted(batch.length);
    first = false;
    for (const m of batch) {
      if (range.since !== undefined && m.timestamp < range.since) {
        // Going back, everything further is older still.
        if (forward) continue;
        return out;
      }
      out.push(m);
      if (out.length >= range.limit) return out;
    }
    const last = batch.at(-1);
    if (!last || (forward ? page.found_newest : page.found_oldest)) return out;
    anchor = last.id;
  }
}
