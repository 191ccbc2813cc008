/**
 * Catch-up after a new queue: the messages sent while no queue was listening are fetched with
 * GET /messages from the bot's cursor and dispatched before the new queue's events.
 */
import type { Message } from "../wire/records.ts";

export interface ReplayPage {
  messages: Message[];
  found_newest?: boolean;
}

export interface ReplayLimits {
  /** At most this many messages are replayed; older ones beyond it become a gap. */
  maxMessages: number;
  /** Messages older than this (by server timestamp) are not replayed; they become a gap. */
  maxAgeMs: number;
}

export interface ReplayResult {
  /** Messages to dispatch, oldest first, all with id > cursor. */
  messages: Message[];
  /** Messages that were missed but not replayed because of the limits. */
  skipped: number;
  /** True when the limits stopped the replay before the newest message. */
  truncated: boolean;
}

/**
 * Fetch every message after `cursor`, page by page, within the limits. When more than
 * `maxMessages` were missed, the newest ones are kept (the skipped oldest are reported).
 *
 * @example
 * ```ts
 * const { messages } = await collectMissed((anchor, n, signal) =>
 *   client.messages.get({ anchor, num_before: 0, num_after: n, include_anchor: false, narrow }, { signal }),
 *   cursor, { maxMessages: 1000, maxAgeMs: 86_400_000 }, Date.now(), signal);
 * ```
 */
export async function collectMissed(
  fetchPage: (anchor: number, numAfter: number, signal: AbortSignal) => Promise<ReplayPage>,
  cursor: number,
  limits: ReplayLimits,
  nowMs: number,
  signal: AbortSignal,
  pageSize = 500,
): Promise<ReplayResult> {
  const oldestAllowed = (nowMs - limits.maxAgeMs) / 1000;
  let kept: Message[] = [];
  let skipped = 0;
  let anchor = cursor;
  for (;;) {
    signal.throwIfAborted();
    const page = await fetchPage(anchor, pageSize, signal);
    const fresh = page.messages.filter((m) => m.id > anchor).sort((a, b) => a.id - b.id);
    for (const m of fresh) {
      if (m.timestamp < oldestAllowed) skipped++;
      else kept.push(m);
    }
    const last = fresh.at(-1);
    if (!last || page.found_newest !== false) break;
    anchor = last.id;
  }
  let truncated = skipped > 0;
  if (kept.length > limits.maxMessages) {
    skipped += kept.length - limits.maxMessages;
    kept = kept.slice(kept.length - limits.maxMessages);
    truncated = true;
  }
  return { messages: kept, skipped, truncated };
}
