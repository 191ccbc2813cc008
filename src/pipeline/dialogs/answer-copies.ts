/**
 * An answer whose append the log refused (the dialog ended, or another writer moved its log: a
 * second instance on the same store) may be a copy of one the log holds: the other writer took
 * the same message, or the same reaction on the question, and recorded it first.
 */
import type { Dialogs } from "./dialogs.ts";

/**
 * Whether dialog `id`'s log holds the answer of message `msg` (for a reaction: of question `msg`):
 * by its header as this process knows it, else as the store keeps it (an ended dialog's, for a
 * while: dialog-log.ts).
 */
export async function recorded(dialogs: Dialogs, id: string, msg: number): Promise<boolean> {
  const head = dialogs.entry(id)?.head ?? (await dialogs.log.head(id));
  return head?.answered.includes(msg) === true;
}
