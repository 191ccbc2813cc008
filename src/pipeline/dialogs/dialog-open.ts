/**
 * A start's first read of the bot's dialogs (after the ledger): their headers only, each log read
 * when its dialog runs. The notes of ended dialogs not known to be said, and of those the store
 * lost, are said in their conversations' order on the budget's background lane (end-notes.ts).
 */
import { inBackground } from "../../api/budget-line.ts";
import type { ConversationQueue } from "../conversation-queue.ts";
import type { DialogHead } from "./dialog-record.ts";
import { type NoteParts, sayLost, sayNote } from "./end-notes.ts";

/** The dialogs holding an answer not yet run (run once the bot starts); undefined if `signal` aborted. */
export async function openDialogs(
  o: NoteParts & { queue: ConversationQueue },
  signal: AbortSignal,
): Promise<DialogHead[] | undefined> {
  const { ready, lost } = await o.dialogs.load();
  if (signal.aborted) return undefined;
  const heads: DialogHead[] = [];
  for (const head of lost) o.queue.push(head.conversation, (c) => sayLost(o, head, inBackground(c)));
  for (const head of ready) {
    const { note } = head;
    if (note === undefined) heads.push(head);
    else o.queue.push(head.conversation, (c) => sayNote(o, head, note, inBackground(c)));
  }
  return heads;
}
