/**
 * Topics move: renamed, resolved (`✔ ` before the name) or moved to another channel, their
 * messages keep their ids. A dialog whose waiting question moved follows it (move-follower.ts):
 * its answer is taken in the new place, and what its runs say in the old place (`ctx.reply` into
 * the conversation the dialog began in, a question's `where`) goes to the new one, while the code,
 * replayed, still sees the first message as it was (so its recorded effects match).
 */
import type { SendMessageParams } from "../../api/resources/messages.ts";
import type { EventMap } from "../../wire/events.ts";
import type { Message } from "../../wire/records.ts";
import { channelKey } from "../conversation-key.ts";
import type { DialogEntry } from "./dialog-entry.ts";
import type { AskedIn, DialogHead, DialogRecord } from "./dialog-record.ts";

/** A move of waiting questions: their message ids, and the channel topic they went to. */
export interface Move {
  /** The conversation's key before the move. */
  from: string;
  /** Message ids moved (all of them, or the question's alone when read back). */
  ids: readonly number[];
  channelId: number;
  /** The channel's name, when the bot knows it. */
  channel: string | undefined;
  topic: string;
}

/**
 * The move an `update_message` event makes, if it moves messages (`from`: its conversation's
 * key); `channelName` names a channel by id (the bot's cache).
 */
export function moveOf(
  event: EventMap["update_message"],
  from: string,
  channelName: (id: number) => string | undefined,
): Move | undefined {
  const { stream_id: was, new_stream_id: moved, subject, orig_subject: origTopic } = event;
  if (was === undefined || origTopic === undefined || (moved === undefined && subject === undefined))
    return undefined;
  const channelId = moved ?? was;
  const channel = channelName(channelId) ?? (moved === undefined ? event.stream_name : undefined);
  return { from, ids: event.message_ids, channelId, channel, topic: subject ?? origTopic };
}

/** The move that took message `m` (read back) out of conversation `from`, if it is elsewhere now. */
export function readBackMove(m: Message, from: string): Move | undefined {
  if (m.stream_id === undefined || channelKey(m.stream_id, m.subject) === from) return undefined;
  const channel = typeof m.display_recipient === "string" ? m.display_recipient : undefined;
  return { from, ids: [m.id], channelId: m.stream_id, channel, topic: m.subject };
}

/** Where `move` went, as a question's place (`channel`: its channel's name). */
export function placeOf(move: Move, channel: string): AskedIn {
  const { channelId, topic } = move;
  return {
    key: channelKey(channelId, topic),
    label: `#${channel} > ${topic}`,
    to: { channel, channelId, topic },
  };
}

/** `params` sent where the conversations they name moved to (`moves`: a dialog's, oldest first). */
export function placed(params: SendMessageParams, moves: DialogRecord["moves"]): SendMessageParams {
  if (moves === undefined || moves.length === 0 || (params.type !== "channel" && params.type !== "stream"))
    return params;
  let to = params;
  for (const move of moves) {
    const topic = (to as { topic?: string }).topic ?? "";
    if (typeof to.to !== "number" || channelKey(to.to, topic) !== move.from || "direct" in move.to) continue;
    to = { ...to, to: move.to.channelId, topic: move.to.topic };
  }
  return to;
}

/**
 * The message of `head` that places it in `conversation`, if any: its waiting question there, or,
 * while that question waits elsewhere (`where`), the first message of the dialog's own topic.
 */
function placedBy(head: DialogHead, conversation: string): number | undefined {
  if (head.conversation === conversation) return head.asked ?? undefined;
  const id = Number(head.id);
  return head.home?.[0] === conversation && id > 0 ? id : undefined;
}

/** The dialogs among `entries` placed in `conversation` by one of messages `ids` (see {@link placedBy}). */
export function askedAmong(
  entries: Iterable<DialogEntry>,
  conversation: string,
  ids: readonly number[],
): DialogEntry[] {
  const found: DialogEntry[] = [];
  for (const entry of entries) {
    const by = placedBy(entry.head, conversation);
    if (by !== undefined && ids.includes(by)) found.push(entry);
  }
  return found;
}

/**
 * The messages that place the waiting dialogs among `entries` in channel topics (see
 * {@link placedBy}), as [message id, the conversation's key].
 */
function* channelPlaces(entries: Iterable<DialogEntry>): Generator<[number, string]> {
  for (const { head, waiting } of entries) {
    if (!waiting) continue;
    if (head.asked !== null && head.asked > 0 && head.conversation.startsWith("channel:"))
      yield [head.asked, head.conversation];
    const home = head.home?.[0];
    if (home?.startsWith("channel:") && Number(head.id) > 0) yield [Number(head.id), home];
  }
}

/** {@link channelPlaces} as a map: message id → the conversation's key. */
export function askedInChannels(entries: Iterable<DialogEntry>): Map<number, string> {
  return new Map(channelPlaces(entries));
}

/** Whether a dialog among `entries` waits in a channel topic (its bot then needs message moves). */
export function waitsInChannels(entries: Iterable<DialogEntry>): boolean {
  return !channelPlaces(entries).next().done;
}
