/**
 * A question an earlier run sent, kept only by a later one: the process died after the send and
 * before the question's log was written, and the run that wrote it found the send in its effect
 * records. While no process ran, the question may have been deleted, or moved with its topic, and
 * no queue saw it; the waiting questions read back at a new queue (src/events/moved-questions.ts)
 * were read before this one waited. So it is read back once its log is written (one
 * GET /messages; a channel question the bot no longer holds, once more among public channels', as
 * at a new queue), in its conversation's order: one found deleted (feature level 300 and later)
 * ends its step; one found in another channel topic is followed there. A reaction on it that
 * answers it (its buttons pressed meanwhile: the reactions caught up at the new queue were read
 * before it waited) is handed on as its answer, where the question is now (moved, once the move
 * is recorded).
 */
import type { Logger } from "pino";
import { messagePages, PUBLIC_CHANNELS } from "../../api/message-pages.ts";
import type { AnyEvent } from "../../wire/events.ts";
import type { BotContexts } from "../bot-contexts.ts";
import { channelKey } from "../conversation-key.ts";
import type { TaskControl } from "../conversation-queue.ts";
import { type Move, readBackMove } from "./dialog-moves.ts";
import { pressOn } from "./dialog-reactions.ts";
import type { Dialogs } from "./dialogs.ts";

export interface KeptQuestion {
  /** The dialog's id. */
  id: string;
  /** The question's message. */
  msg: number;
}

export interface KeptParts {
  dialogs: Dialogs;
  contexts: BotContexts;
  log: Logger;
  /** Question `msg` of dialog `id`, in conversation `from`, was deleted: its step ends, in that order. */
  gone(from: string, id: string, msg: number): void;
  /** The question moved: its dialog follows it, in the conversation's order. */
  follow(move: Move): void;
  /** A reaction that answers the question, read on it: run in conversation `from`'s order; `done` after. */
  press(from: string, reaction: AnyEvent, done: () => void): void;
}

/** The task reading question `q` back, on its conversation's key. */
export async function readKeptBack(o: KeptParts, control: TaskControl, q: KeptQuestion): Promise<void> {
  const entry = o.dialogs.entry(q.id);
  const server = o.contexts.server;
  if (entry === undefined || !entry.waiting || entry.head.asked !== q.msg || server === undefined) return;
  const from = entry.head.conversation;
  const read = { client: o.contexts.deps().api, featureLevel: server.featureLevel, signal: control.signal };
  const byIds = server.featureLevel >= 300;
  const readOnce = async (narrow?: typeof PUBLIC_CHANNELS) => {
    const [page] = messagePages({ ...read, ...(narrow && { narrow }) }, [q.msg]);
    return (await page)?.find((x) => x.id === q.msg);
  };
  try {
    let m = await readOnce();
    // Not held: moved to a channel the bot is not in, or deleted (see src/events/moved-questions.ts).
    if (m === undefined && byIds && from.startsWith("channel:")) m = await readOnce(PUBLIC_CHANNELS);
    const move = m && readBackMove(m, from);
    // Read while the question still waits where its log says (the read is the only one).
    const press = m && pressOn(o.dialogs.buttons, m);
    if (move !== undefined) o.follow(move);
    else if (m === undefined && byIds) o.gone(from, q.id, q.msg);
    // Moved, the press runs where the question is now: after the move is recorded (that
    // conversation is held until it is), so that the answer finds its dialog there.
    // Not when a new queue's catch-up handed it already (its run not over yet).
    const done = press && o.dialogs.buttons.handOn(press);
    if (press !== undefined && done !== undefined)
      o.press(move ? channelKey(move.channelId, move.topic) : from, press, done);
  } catch (err) {
    if (!control.signal.aborted)
      o.log.warn({ err, dialog: q.id }, "could not read back a question sent before a crash");
  }
}
