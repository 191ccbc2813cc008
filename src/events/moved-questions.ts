/**
 * Topics moved while no queue of the bot was reading (the bot down, a queue lost): after each new
 * queue, the messages that place waiting dialogs in channel topics (their questions, or the first
 * message of one whose question waits elsewhere) are read back, and a dialog whose message is no
 * longer where it was follows it, so that an answer sent in the new place is taken and what the
 * dialog says goes there. One GET /messages per 1,000.
 *
 * A question moved to another channel: the bot may not have been subscribed there while it was
 * down, and then the server kept none of that channel's messages for it (its catch-up has none),
 * so the new topic's messages after the question are read too (at most {@link MOVED_TOPIC_MAX}
 * after each) and handed on as caught up (those handled or caught up already are dropped as
 * duplicates): an answer typed there meanwhile is taken. The questions moved into one topic share
 * its read, forward from the first of them, 1,000 messages per GET /messages: a topic of many
 * questions moved together costs one call per 1,000 of its messages read, not one per question.
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
import { replayMessageFormat } from "./register-params.ts";

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
  const elsewhere = new Map<string, MovedTopic>();
  const all = { ...o, elsewhere };
  let moved = await readAndFollow(all, [...inChannels, ...direct], found);
  // Not held (anymore): moved to a channel the bot is not in, or deleted.
  const missing = byIds ? inChannels.filter((id) => !found.has(id)) : [];
  if (missing.length > 0) moved += await readAndFollow({ ...all, narrow: PUBLIC_CHANNELS }, missing, found);
  for (const topic of elsewhere.values()) await readMovedTopic(o, topic);
  const deleted = [...asked, ...direct].filter((id) => !found.has(id));
  if (deleted.length > 0) await o.gone?.(deleted);
  return moved;
}

/** Read `ids` (those read already are not asked again), adding each found to `found`; follow those moved. */
async function readAndFollow(
  o: Following & { narrow?: typeof PUBLIC_CHANNELS },
  ids: readonly number[],
  found: Set<number>,
): Promise<number> {
  const unread = ids.filter((id) => !o.read.has(id));
  const known = ids.flatMap((id) => o.read.get(id) ?? []);
  for (const m of known) found.add(m.id);
  let moved = await followAll(o, known);
  // A page at a time, as the reactions' catch-up reads them: a start with many waiting
  // questions neither bursts its calls nor hangs a listener per page on the one signal.
  for (const page of messagePages({ ...o, lane: "background" }, unread)) {
    const messages = await page;
    for (const m of messages) found.add(m.id);
    moved += await followAll(o, messages);
  }
  return moved;
}

/** A topic in another channel that questions moved into, and those questions' ids. */
interface MovedTopic {
  channelId: number;
  topic: string;
  questions: Set<number>;
}

/** The call's state: the topics in other channels questions moved into, read once all are followed. */
type Following = MovedQuestions & { elsewhere: Map<string, MovedTopic> };

/** Follow each of `messages` no longer where its dialog waits; returns how many had moved. */
async function followAll(o: Following, messages: readonly Message[]): Promise<number> {
  let moved = 0;
  for (const m of messages) {
    const from = o.waiting.get(m.id);
    const move = from === undefined ? undefined : readBackMove(m, from);
    if (move === undefined) continue;
    await o.follow(move);
    moved++;
    if (o.accept === undefined || move.from.startsWith(`channel:${move.channelId}:`)) continue;
    const key = `${move.channelId}:${move.topic}`;
    const topic = o.elsewhere.get(key) ?? {
      channelId: move.channelId,
      topic: move.topic,
      questions: new Set(),
    };
    topic.questions.add(m.id);
    o.elsewhere.set(key, topic);
  }
  return moved;
}

/** Messages per GET /messages of a moved topic's read. */
const TOPIC_PAGE = 1000;

/**
 * Hand on the messages of `moved`'s topic that follow one of its questions by at most
 * {@link MOVED_TOPIC_MAX}: read forward from the first question, a page at a time, until that many
 * follow the last question or the topic's newest is reached.
 */
async function readMovedTopic(o: MovedQuestions, moved: MovedTopic): Promise<void> {
  const narrow = [
    { operator: "channel", operand: moved.channelId },
    { operator: "topic", operand: moved.topic },
  ] as const;
  const last = Math.max(...moved.questions);
  let anchor = Math.min(...moved.questions);
  // Messages since the latest question read: one is handed on while this is within the window.
  let since = 0;
  for (;;) {
    const page = await o.client.messages.get(
      { anchor, num_before: 0, num_after: TOPIC_PAGE, include_anchor: false, narrow, ...replayMessageFormat },
      { signal: o.signal, lane: "background" },
    );
    const batch = page.messages.filter((m) => m.id > anchor).sort((a, b) => a.id - b.id);
    for (const m of batch) {
      if (moved.questions.has(m.id)) {
        since = 0;
        continue;
      }
      if (++since <= MOVED_TOPIC_MAX) o.accept?.(m);
      else if (m.id > last) return;
    }
    const end = batch.at(-1);
    if (!end || page.found_newest) return;
    anchor = end.id;
  }
}
