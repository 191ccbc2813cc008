/**
 * Reactions as answers: a question asked with emoji choices (`choices: { approve: "check" }`)
 * is answered by a reaction with one of them on the question's message, from a person who may
 * answer it, before its deadline. The first such reaction (by event order) is the answer; later
 * ones, and reactions taken off, change nothing.
 */
import { allows, type Membership } from "./ask-options.ts";
import type { DialogEntry } from "./dialog-entry.ts";

/**
 * The entry whose waiting question the reaction answers, and the choice it names, taken (as
 * `Dialogs.match` takes an answer); undefined when it answers nothing (an ordinary event).
 */
export function reactionAnswer(
  entries: Iterable<DialogEntry>,
  reaction: { messageId: number; userId: number; name: string },
  who: Membership,
  now: number,
): { entry: DialogEntry; value: string } | undefined {
  for (const entry of entries) {
    const { head } = entry;
    if (head.asked !== reaction.messageId || head.react === undefined) continue;
    const value = head.react[reaction.name];
    const may = head.from ? allows(head.from, reaction.userId, who) : reaction.userId === head.userId;
    const open = entry.waiting && !entry.running && entry.ready === undefined && !entry.unread;
    if (value === undefined || !may || !open || now > head.deadline) return undefined;
    entry.waiting = false;
    entry.running = true;
    return { entry, value };
  }
  return undefined;
}
