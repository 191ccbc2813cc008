/**
 * Where each dialog waits: conversation → the dialog there, or (when several people are asked in
 * one conversation) user id → dialog. A question others may answer (`from`) waits under
 * {@link ANYONE}. The conversation's key is the header's own string, so a dialog costs one map
 * entry here and no key of its own.
 */
import { allows, choiceOf, type Membership } from "./ask-options.ts";
import type { DialogEntry } from "./dialog-entry.ts";
import type { DialogHead } from "./dialog-record.ts";

/** The place of a question whose answer may come from others than the dialog's person. */
export const ANYONE = 0;

/**
 * Whether a message from `userId` (`said`: its text as the handler reads it, made only when needed)
 * goes to the question for others `head` waits at: the cancel word from the dialog's person, who
 * withdraws the question with it, also when `from` allows them to answer (a question kept without
 * the word cannot be withdrawn); or a message from one `from` allows (with choices, only a choice:
 * the rest is the people there talking).
 */
function goesTo(
  head: DialogHead,
  userId: number,
  said: (() => string) | undefined,
  who: Membership,
): boolean {
  if (head.from === undefined) return false;
  const word = head.cancel;
  if (userId === head.userId && word !== undefined && said?.().toLowerCase() === word.toLowerCase())
    return true;
  if (!allows(head.from, userId, who)) return false;
  return head.choices === undefined || said === undefined || choiceOf(head.choices, said()).ok;
}

const whoOf = (head: DialogHead) => (head.from === undefined ? head.userId : ANYONE);

export class DialogPlaces {
  readonly #byPlace = new Map<string, DialogEntry | Map<number, DialogEntry>>();

  /** The dialog waiting for `userId` in `conversation`. */
  at(conversation: string, userId: number): DialogEntry | undefined {
    const there = this.#byPlace.get(conversation);
    if (there instanceof Map) return there.get(userId);
    return there !== undefined && whoOf(there.head) === userId ? there : undefined;
  }

  /** The question for others waiting in `conversation`, if a message from `userId` (`said`) goes to it. */
  openTo(conversation: string, userId: number, said: (() => string) | undefined, who: Membership) {
    const open = this.at(conversation, ANYONE);
    return open !== undefined && goesTo(open.head, userId, said, who) ? open : undefined;
  }

  /** `entry` is the dialog waiting for its person in its conversation (replacing any there). */
  put(entry: DialogEntry): void {
    const { conversation } = entry.head;
    const userId = whoOf(entry.head);
    const there = this.#byPlace.get(conversation);
    // A dialog there is keyed as it is looked up: by its person, or ANYONE for a question for others.
    if (there === undefined || (!(there instanceof Map) && whoOf(there.head) === userId)) {
      this.#byPlace.set(conversation, entry);
    } else if (there instanceof Map) there.set(userId, entry);
    else
      this.#byPlace.set(
        conversation,
        new Map([
          [whoOf(there.head), there],
          [userId, entry],
        ]),
      );
  }

  /** `entry` waits there no more (nothing changes if another dialog took its place). */
  drop(entry: DialogEntry): void {
    const { conversation } = entry.head;
    const userId = whoOf(entry.head);
    const there = this.#byPlace.get(conversation);
    if (there === entry) this.#byPlace.delete(conversation);
    else if (there instanceof Map && there.get(userId) === entry) {
      there.delete(userId);
      if (there.size === 0) this.#byPlace.delete(conversation);
    }
  }
}
