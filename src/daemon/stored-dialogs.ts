/**
 * `bothost dialogs` when no daemon answers: the open dialogs as the state store keeps them, read
 * from each configured bot's dialog headers, and from the records of a version before dialog logs
 * that no start has rewritten yet (read as a start would rewrite them; nothing is written); and the
 * ended dialogs whose end note the bot's next start says (a running daemon says them at its start).
 * What only the running daemon knows is left out: whether the bot's narrow keeps a dialog's answers out.
 */

import type { Config } from "../config/schema.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { noBotNamed } from "../errors/did-you-mean.ts";
import type { BotDialogs } from "../http/daemon-status.ts";
import { atNextStart, type DialogView, viewOf } from "../pipeline/dialogs/dialog-entry.ts";
import { asHead, type DialogHead } from "../pipeline/dialogs/dialog-head.ts";
import { headAfter } from "../pipeline/dialogs/dialog-record.ts";
import { migrateV1 } from "../pipeline/dialogs/dialog-v1.ts";
import { byEnd, type PendingNote, pendingNote } from "../pipeline/dialogs/pending-notes.ts";
import type { StateStore } from "../state/state-store.ts";

/**
 * The open dialogs of `bot` (every bot of `config` without one) in `root`, each bot's oldest first,
 * with the end notes still to be said (`notes`, oldest end first; absent when none).
 */
export async function storedDialogs(config: Config, root: StateStore, bot?: string): Promise<BotDialogs[]> {
  const names = Object.keys(config.bots);
  if (bot !== undefined && !names.includes(bot))
    throw new BothostError("UNKNOWN_BOT", noBotNamed(bot, names, "the config"));
  return Promise.all(
    (bot === undefined ? names : [bot]).map(async (name) => ({
      bot: name,
      ...(await storedDialogsOf(root, name)),
    })),
  );
}

/**
 * Bot `name`'s open dialogs in `root`, oldest first, and its end notes still to be said (`notes`,
 * oldest end first; absent when none); also what the testing kit lists of a stopped bot.
 */
export async function storedDialogsOf(
  root: StateStore,
  name: string,
): Promise<{ dialogs: DialogView[]; notes?: PendingNote[] }> {
  const heads: DialogHead[] = [];
  const store = root.namespace(name).namespace("dialogs");
  // An older version's record, as the bot's next start will write it: the header it gets.
  await migrateV1(store, async (head, entries) => {
    heads.push(headAfter(head, entries, 0));
    return head;
  });
  const notes: PendingNote[] = [];
  for (const { value } of await store.list("h:")) {
    const head = asHead(value);
    if (head !== undefined && head.ended === undefined) heads.push(head);
    else if (head?.note !== undefined) notes.push(pendingNote(head));
  }
  heads.sort((a, b) => a.startedAt - b.startedAt);
  notes.sort(byEnd);
  return {
    // No daemon runs it: a dialog not waiting is run at the bot's next start, not being handled.
    dialogs: heads.map((head) => atNextStart(viewOf({ id: head.id, head, waiting: head.waiting }))),
    ...(notes.length > 0 && { notes }),
  };
}
