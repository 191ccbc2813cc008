/**
 * A waiting question deleted (by a moderator, an admin, the person): its prompt ends, once, with
 * `PROMPT_DELETED`. The question is the message the dialog's header keeps as asked, or the one
 * its buttons are on (a choice question asked again after a refused answer): a deletion of either
 * ends the step. The bot's queue receives `delete_message` while a dialog waits; the dialog
 * engine (dialog-runs.ts) records the deletion in the conversation's order, as it does a deadline.
 */
import type { DialogEntry } from "./dialog-entry.ts";
import type { WantedEvent } from "./dialogs-options.ts";

/**
 * A dialog waiting for an answer to a question with a message id: a deletion of it ends the step.
 * A question whose send gave no id follows the message that began the dialog: that message's
 * deletion is no question's.
 */
function waitsAtMessage(entry: DialogEntry): boolean {
  const { asked, id } = entry.head;
  return entry.waiting && asked !== null && asked > 0 && String(asked) !== id;
}

/**
 * The event types a question about to be sent to conversation `key` needs its bot's queue to
 * receive, asked for before the send (Dialogs.asking), whether the question is in its dialog's own
 * conversation or elsewhere (`where`): in a channel topic, deletions with moves, so that both come
 * in the one renewal the question may need. Asked for only once the question is kept, they would
 * come in a renewal after the question is out, and a deletion in between would be seen only when
 * the questions are read back at that queue (moved-questions.ts), after its catch-up. A question in
 * a direct message is read back at the new queue too: there deletions are asked for once it is
 * kept, as before.
 */
export function wantedAsking(key: string): WantedEvent[] {
  return key.startsWith("channel:") ? ["delete_message", "update_message"] : [];
}

/** The event types dialog `entry` needs its bot's queue to receive: deletions, and moves in a channel. */
export function eventsWanted(entry: DialogEntry): WantedEvent[] {
  const types: WantedEvent[] = waitsAtMessage(entry) ? ["delete_message"] : [];
  if (entry.head.conversation.startsWith("channel:")) types.push("update_message");
  return types;
}

/** Whether a dialog among `entries` waits at a question's message (its bot then needs deletions). */
export function waitsAtMessages(entries: Iterable<DialogEntry>): boolean {
  for (const entry of entries) if (waitsAtMessage(entry)) return true;
  return false;
}

/** The question message of the step `entry` waits at among `ids`, if one is. */
export function questionAmong(entry: DialogEntry, ids: readonly number[]): number | undefined {
  if (!waitsAtMessage(entry)) return undefined;
  const { asked, btn } = entry.head;
  if (asked !== null && ids.includes(asked)) return asked;
  return btn !== undefined && ids.includes(btn) ? btn : undefined;
}

/**
 * The messages of the questions waiting among `entries` in conversations of `kind` (a question's,
 * and its buttons'): direct messages, or channel topics.
 */
export function askedIn(entries: Iterable<DialogEntry>, kind: "dm:" | "channel:"): number[] {
  const ids: number[] = [];
  for (const entry of entries) {
    if (!waitsAtMessage(entry) || !entry.head.conversation.startsWith(kind)) continue;
    ids.push(entry.head.asked as number);
    if (entry.head.btn !== undefined) ids.push(entry.head.btn);
  }
  return ids;
}
