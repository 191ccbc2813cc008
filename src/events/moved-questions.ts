/**
 * Topics moved while no queue of the bot was reading (the bot down, a queue lost): after each new
 * queue, the messages that place waiting dialogs in channel topics (their questions, or the first
 * message of one whose question waits elsewhere) are read back, and a dialog whose message is no
 * longer where it was follows it, so that an answer sent in the new place is taken and what the
 * dialog says goes there. One GET /messages per 1,000.
 *
 * A question moved to another channel: the bot may not have been subscribed there while it was
 * down, and then the server kept none of that channel's messages for it (its catch-up has none),
 * so the new topic's messages after the question are read too (one GET /messages, at most
 * {@link MOVED_TOPIC_MAX}) and handed on as caught up (those handled or caught up already are
 * dropped as duplicates): an answer typed there meanwhile is taken.
 *
 * A read by ids lists the messages the bot holds, and a move to a channel the bot is not
 * subscribed to takes the question from it: the channel questions missing from the pages are read
 * once more, together, under the narrow of public channels (one GET /messages per 1,000, feature
 * level 300 and later), and a question found there is followed as above.
 *
 * The questions waiting in direct messages are read in the same pages (feature level 300 and
 * later, where a page names the ids it asks for): a direct message cannot move and the bot keeps
 * access to what it sent there, so one absent from what the server returns was deleted. A channel
 * question absent from both reads was deleted too, or moved into a private channel the bot is not
 * in, which the server tells a reading queue as a deletion (`delete_message`): either way its step
 * ends. One in a channel the bot left is still held, found where it was, and nothing is concluded.
 */
import type { Client } from "../api/create-client.ts";
import { messagePages, PUBLIC_CHANNELS } from "../api/message-pages.ts";
import { type Move, readBackMove } from "../pipeline/dialogs/dialog-moves.ts";
import type { Message } from "../wire/records.ts";
import { fetchHistory } from "./history.ts";

export interface MovedQuestions {
  client: Client;
  featureLevel: number;
  signal: AbortSignal;
  /** The messages placing waiting dialogs in channel topics: message id → the conversation's key. */
  waiting: ReadonlyMap<number, string>;
  /** Follows a move (the dialog engine's `followNow`). */
  follow(move: Move): Promise<void>;
  /** Questions read back already (by the reactions' catch-up), by id: not asked for again. */
  read: ReadonlyMap<number, Message>;
  /** The messages of questions waiting in direct messages (a question's, or its buttons'). */
  direct?: readonly number[];
  /** The messages of questions waiting in channel topics (a question's, or its buttons'). */
  channel?: readonly number[];
  /** Told the questions found deleted (the dialog engine's `goneNow`). */
  gone?(ids: readonly number[]): Promise<void>;
  /** Hands a message of a topic a question moved to in another channel to the pipeline, as caught up. */
  accept?(message: Message): unknown;
}

/** How many messages after a question moved to another channel are read in its new topic. */
export const MOVED_TOPIC_MAX = 100;

/** Returns how many questions had moved. */
export async function followMovedQuestions(o: MovedQuestions): Promise<number> {
  // Only a read by ids (feature level 300 and later) tells a deleted question by its absence.
  const byIds = o.featureLevel >= 300;
  const direct = byIds && o.gone ? (o.direct ?? []) : [];
  const asked = byIds && o.gone ? (o.channel ?? []) : [];
  if (o.waiting.size === 0 && direct.length === 0 && asked.length === 0) return 0;
  const inChannels = [...new Set([...o.waiting.keys(), ...asked])];
  const found = new Set<number>();
  let moved = await readAndFollow(o, [...inChannels, ...direct], found);
  // Not held (anymore): moved to a channel the bot is not in, or deleted.
  const missing = byIds ? inChannels.filter((id) => !found.has(id)) : [];
  if (missing.length > 0) moved += await readAndFollow({ ...o, narrow: PUBLIC_CHANNELS }, missing, found);
  const deleted = [...asked, ...direct].filter((id) => !found.has(id));
  if (deleted.length > 0) await o.gone?.(deleted);
  return moved;
}

/** Read `ids` (those read already are not asked again), adding each found to `found`; follow those moved. */
async function readAndFollow(
  o: MovedQuestions & { narrow?: typeof PUBLIC_CHANNELS },
  ids: readonly number[],
  found: Set<number>,
): Promise<number> {
  const unread = ids.filter((id) => !o.read.has(id));
  const known = ids.flatMap((id) => o.read.get(id) ?? []);
  for (const m of known) found.add(m.id);
  let moved = await followAll(o, known);
  // A page at a time, as the reactions' catch-up reads them: a start with many waiting
  // questions neither bursts its calls nor hangs a listener per page on the one signal.
  for (const page of messagePages(o, unread)) {
    const messages = await page;
    for (const m of messages) found.add(m.id);
    moved += await followAll(o, messages);
  }
  return moved;
}

/** Follow each of `messages` no longer where its dialog waits; returns how many had moved. */
async function followAll(o: MovedQuestions, messages: readonly Message[]): Promise<number> {
  let moved = 0;
  for (const m of messages) {
    const from = o.waiting.get(m.id);
    const move = from === undefined ? undefined : readBackMove(m, from);
    if (move === undefined) continue;
    await o.follow(move);
    moved++;
    if (o.accept === undefined || move.from.startsWith(`channel:${move.channelId}:`)) continue;
    const narrow = [
      { operator: "channel", operand: move.channelId },
      { operator: "topic", operand: move.topic },
    ] as const;
    const range = { narrows: [narrow], fromId: m.id + 1, limit: MOVED_TOPIC_MAX, signal: o.signal };
    for (const message of await fetchHistory(o.client, range)) o.accept(message);
  }
  return moved;
}
