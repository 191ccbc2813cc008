/**
 * Questions found deleted at a new queue (read back: see moved-questions.ts), for the dialog
 * engine (dialog-runs.ts): each waiting dialog whose question is among them ends its step, as a
 * deletion the queue delivered does, but recorded at once, not in its conversation's order.
 */
import type { Logger } from "pino";
import type { ConversationQueue, TaskControl } from "../conversation-queue.ts";
import { questionAmong } from "./dialog-deletions.ts";
import type { DialogEntry, ReadyRun } from "./dialog-entry.ts";
import { DialogEnded, LogMoved } from "./dialog-log.ts";
import type { Dialogs } from "./dialogs.ts";

export interface DeletedParts {
  dialogs: Dialogs;
  queue: ConversationQueue;
  log: Logger;
}

/**
 * The questions `ids` deleted: recorded, tried again while the store fails, until `signal`
 * aborts; then each dialog runs (`ready`, a task on its conversation). A dialog a message caught
 * up meanwhile answered ignores it (which came first, the answer or the deletion, cannot be told).
 */
export async function deletedAtNewQueue(
  o: DeletedParts,
  ids: readonly number[],
  signal: AbortSignal,
  ready: (control: TaskControl, run: ReadyRun) => unknown,
): Promise<void> {
  const { dialogs, queue, log } = o;
  const one = async (entry: DialogEntry, msg: number) => {
    entry.running = true;
    try {
      const record = await dialogs.retrying(signal, () => dialogs.timeOut(entry, msg));
      log.info({ dialog: entry.id, message: msg }, "a dialog's waiting question was deleted");
      const run = { id: record.id, record };
      // Stopped meanwhile: the next start runs it (as a dialog's write landed after the stop).
      if (dialogs.markReady(run) && !signal.aborted) queue.push(record.conversation, ready, run);
    } catch (err) {
      dialogs.unmatch(entry);
      if (!(err instanceof DialogEnded || err instanceof LogMoved))
        log.warn(
          { err, dialog: entry.id },
          "a deleted question was not recorded: it is read back at the next new queue",
        );
    }
  };
  const found: Promise<void>[] = [];
  for (const entry of dialogs.entries()) {
    const msg = entry.running || entry.ready !== undefined ? undefined : questionAmong(entry, ids);
    if (msg !== undefined) found.push(one(entry, msg));
  }
  await Promise.all(found);
}
