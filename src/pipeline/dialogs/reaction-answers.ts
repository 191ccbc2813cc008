/**
 * A reaction event to the dialog engine (dialog-runs.ts): the answer of the waiting question it is
 * on (see dialog-reactions.ts), recorded, or an ordinary event. One whose answer the log refuses
 * (ended meanwhile, or moved by another writer: a second instance on the same store) is matched
 * again, to the dialog as its log is now: the answer of its question still waiting (the question
 * moved to another topic, say), a copy of the answer the log holds for that question (the other
 * writer took the same reaction), or an ordinary event.
 */
import type { BotContexts } from "../bot-contexts.ts";
import type { TaskControl } from "../conversation-queue.ts";
import type { Incoming } from "../incoming.ts";
import { emojiIdentity } from "./button-codes.ts";
import { type DialogEntry, whenOver, whenSettled } from "./dialog-entry.ts";
import { nameOf } from "./dialog-reactions.ts";
import type { DialogRecord } from "./dialog-record.ts";
import type { Dialogs } from "./dialogs.ts";
import type { DialogMoves } from "./move-follower.ts";

/**
 * Append an answer to `entry`'s log with the conversation's key held, then run the dialog (the
 * engine's); `again` runs in the conversation's order when the log refuses the append.
 */
export type AnswerRecorder = (
  control: TaskControl,
  entry: DialogEntry,
  write: () => Promise<DialogRecord>,
  again: (control: TaskControl) => unknown,
) => void;

export interface ReactionParts {
  dialogs: Dialogs;
  contexts: BotContexts;
  moves: DialogMoves;
  /** Runs an ordinary event's handlers; counts a copy of an answer already recorded. */
  runs: { run(control: TaskControl, incoming: Incoming): unknown; duplicate(): void };
  record: AnswerRecorder;
}

/** What an answer reads of a reaction event. */
interface ReactionEvent {
  op: string;
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code?: string;
  reaction_type?: string;
  user?: { full_name?: string };
}

export class ReactionAnswers {
  readonly #o: ReactionParts;

  constructor(parts: ReactionParts) {
    this.#o = parts;
  }

  /** A reaction: the answer of the question it is on, or an ordinary event. */
  readonly run = (control: TaskControl, incoming: Incoming, waited = false): unknown => {
    const { dialogs, runs } = this.#o;
    const r = incoming.event as unknown as ReactionEvent;
    const code = r.emoji_code === undefined ? undefined : emojiIdentity(r.reaction_type, r.emoji_code);
    const reaction = { messageId: r.message_id, userId: r.user_id, name: r.emoji_name, code };
    // The waiting questions are being read back (moves made while no queue read): a reaction is
    // matched once they are, after the messages caught up before it (a typed answer goes first),
    // and its dialog is where its question is now.
    const moved = r.op === "add" && !waited ? this.#o.moves.readBack(r.user_id) : undefined;
    if (moved !== undefined) return moved.then(() => this.run(control, incoming, waited));
    // On the question of a dialog being ended: matched again once the end is kept (or failed).
    const ending = r.op === "add" ? dialogs.buttons.ending(reaction) : undefined;
    if (ending !== undefined)
      return whenOver(ending, control.signal).then((over) =>
        over ? this.run(control, incoming, waited) : runs.run(control, incoming),
      );
    const found = r.op === "add" ? dialogs.buttons.take(reaction) : undefined;
    if (found === undefined) {
      // On a question just sent, its log not kept yet: matched again once it is.
      const sending = r.op === "add" && !waited ? dialogs.buttons.sending(r.message_id) : undefined;
      if (sending === undefined) return runs.run(control, incoming);
      return whenSettled(sending, control.signal).then(() => this.run(control, incoming, true));
    }
    const { entry, value } = found;
    // A reaction caught up after a new queue carries no name: the users cache (or the server) has it.
    const name = r.user?.full_name ?? nameOf(this.#o.contexts.deps().services?.users, r.user_id);
    if (typeof name !== "string")
      return name.then((known) => this.#answered(control, incoming, entry, value, known));
    return this.#answered(control, incoming, entry, value, name);
  };

  /** Record `value`, chosen by `incoming`'s reaction, as the answer of `entry`'s question. */
  #answered(control: TaskControl, incoming: Incoming, entry: DialogEntry, value: string, name: string): void {
    const r = incoming.event as unknown as ReactionEvent;
    // The message pressed: the question, or the refusal that asked it again (its buttons are there).
    const question = r.message_id;
    const at = { id: question, timestamp: Math.floor(this.#o.contexts.clock.now() / 1000) };
    const by = { id: r.user_id, name };
    this.#o.record(
      control,
      entry,
      () => this.#o.dialogs.answer(entry, at, value, by),
      (again) => this.#refused(again, incoming, entry.id, question),
    );
  }

  /**
   * The answer `incoming` chose for `question` of dialog `id` was refused: when the log now holds
   * an answer to that question (the other writer took this reaction, or one before it, and may
   * have ended the dialog since), the reaction is a copy of it; else (or when the store cannot
   * tell) it is matched again.
   */
  async #refused(control: TaskControl, incoming: Incoming, id: string, question: number): Promise<unknown> {
    if (!(await this.#o.dialogs.holdsAnswer(id, question).catch(() => false)))
      return this.run(control, incoming);
    this.#o.runs.duplicate();
    return undefined;
  }
}
