/**
 * The dialog engine: what a message means to the bot's dialogs, decided before any handler, and when
 * a dialog runs again. Calls go one way: the dispatcher hands it each message; it records an answer
 * (or a passed deadline) in the dialog's log through the one writer (dialogs.ts), then runs the
 * dialog as an ordinary run of its first message (runs.ts) on its conversation's key, in its order.
 *
 * An answer's append is its message's commit: the message id is in the log's header, so a copy
 * caught up after a crash is known as handled before the ledger's mark is written. While the log
 * cannot be written (a store outage of any length), the append is tried again and the
 * conversation waits: later messages there are matched only after it.
 */
import type { Logger } from "pino";
import { failpoint } from "../../effects/failpoints.ts";
import { isKeptDelivery } from "../../state/dead-letters.ts";
import {
  type AnyEvent,
  type EventMap,
  isTypedEvent,
  reviveEvent,
  type ServerEvent,
} from "../../wire/events.ts";
import { type SelfRef, saidToOther, textOf } from "../addressed.ts";
import type { BotContexts } from "../bot-contexts.ts";
import { conversationKey, deletedIds } from "../conversation-key.ts";
import type { ConversationQueue, TaskControl } from "../conversation-queue.ts";
import { cameBy, type Incoming } from "../incoming.ts";
import { stoppedBy } from "../router-error.ts";
import { againAfter, LEASE_STOP } from "../stop-cut.ts";
import { deletedAtNewQueue } from "./deleted-at-new-queue.ts";
import { questionAmong } from "./dialog-deletions.ts";
import { endByOperator } from "./dialog-ends.ts";
import { type DialogEntry, type ReadyRun, whenOver, whenSettled } from "./dialog-entry.ts";
import { DialogEnded, LogMoved } from "./dialog-log.ts";
import { openDialogs } from "./dialog-open.ts";
import type { DialogHead, DialogRecord } from "./dialog-record.ts";
import type { Dialogs } from "./dialogs.ts";
import { type KeptParts, readKeptBack } from "./kept-question.ts";
import { DialogMoves } from "./move-follower.ts";
import { escapes } from "./prompt-options.ts";
import { type AnswerRecorder, ReactionAnswers } from "./reaction-answers.ts";

/** Nothing to wait for (a resumed task that runs as soon as the task before it is over). */
const SETTLED: Promise<void> = Promise.resolve();

/** The runs the engine hands messages and dialogs to (runs.ts). */
export interface TurnRunner {
  /** Stage 4 and 5 for `incoming`: its handlers, or its dialog's replay (a run that parks ends `control`'s task). */
  run(control: TaskControl, incoming: Incoming): unknown;
  /** Stage 5 for a message handled here (an answer recorded, a copy of one): its ledger mark. */
  finished(incoming: Incoming): Promise<unknown> | undefined;
  /** Counts a copy of an answer already recorded. */
  duplicate(): void;
}

/** The bot's commands, as far as a waiting prompt asks: which one a message runs, if any. */
export interface CommandNames {
  named(event: AnyEvent, bot: SelfRef): string | undefined;
}

export interface DialogEngineParts {
  dialogs: Dialogs;
  queue: ConversationQueue;
  contexts: BotContexts;
  log: Logger;
  runs: TurnRunner;
  commands?: CommandNames | undefined;
}

export class DialogEngine {
  readonly #o: DialogEngineParts;
  /** Dialogs read at start that hold an answer not yet run: run at {@link start}. */
  #ready: DialogHead[] = [];
  /** Dialogs following their questions' moves (dialog-moves.ts). */
  readonly moves: DialogMoves;
  /** Reactions as answers (reaction-answers.ts). */
  readonly #reactions: ReactionAnswers;
  /** How the stop's cut lines are said: at debug for a lease's (dispatcher.drain says it once); where it runs again. */
  #cut = { level: "warn" as "warn" | "debug", where: againAfter(undefined) };

  constructor(parts: DialogEngineParts) {
    this.#o = parts;
    this.moves = new DialogMoves(parts);
    const record: AnswerRecorder = (control, entry, write, again) =>
      this.#record(control, entry, write, { again });
    this.#reactions = new ReactionAnswers({ ...parts, moves: this.moves, record });
  }

  stopping(stop: string | undefined): void {
    this.#cut = { level: stop === LEASE_STOP ? "debug" : "warn", where: againAfter(stop) };
  }

  /**
   * Read the dialogs' headers (at each start, after the ledger), their notes said (dialog-open.ts).
   * False if `signal` aborted.
   */
  async open(signal: AbortSignal): Promise<boolean> {
    const ready = await openDialogs(this.#o, signal);
    if (ready === undefined) return false;
    this.#ready = ready;
    return true;
  }

  /** The bot runs handlers: dialogs holding an answer run, and deadlines are waited for. */
  start(): void {
    const { queue, dialogs } = this.#o;
    const ready = this.#ready;
    this.#ready = [];
    for (const head of ready) {
      const run = dialogs.entry(head.id)?.ready;
      if (run !== undefined) queue.push(head.conversation, this.#readyTask, run);
    }
    const kept: KeptParts = {
      ...this.#o,
      gone: (from, id, msg) => queue.push(from, this.#goneTask, { id, ids: [msg] }),
      follow: (move) => this.moves.follow(move),
      press: (from, event, done) =>
        queue.push(from, this.run, { event, replayed: true, issue: undefined, reply: undefined }, done),
    };
    dialogs.arm({
      due: (id, conversation) => queue.push(conversation, this.#dueTask, id),
      ready: (run, conversation) => queue.push(conversation, this.#readyTask, run),
      // A question sent before a crash, kept only now: read back in its conversation's order.
      kept: (id, conversation, msg) => queue.push(conversation, (c) => readKeptBack(kept, c, { id, msg })),
    });
  }

  /** Stage 4 for a message: an answer (recorded, then its dialog run), or handlers as usual. */
  readonly run = (control: TaskControl, incoming: Incoming): unknown => {
    const { dialogs, runs } = this.#o;
    const { event, issue } = incoming;
    if (incoming.letter && incoming.dialog) return this.#reopened(control, incoming, incoming.dialog);
    // A kept outgoing-webhook delivery never ran: matched as any message (it may be an answer).
    const letter = incoming.letter && !isKeptDelivery(incoming.letter);
    if (dialogs.size === 0 || incoming.dialog || letter) return runs.run(control, incoming);
    if (event.type === "reaction") return this.#reactions.run(control, incoming);
    if (event.type !== "message") return runs.run(control, incoming);
    if (!isTypedEvent(event, issue)) return runs.run(control, incoming);
    return this.#message(control, incoming, event as ServerEvent & { type: "message" });
  };

  /**
   * A message while dialogs wait: an answer, or handlers as usual. Apart from {@link run}: its
   * closures would make every event's run allocate their scope, a burst's included.
   */
  #message(control: TaskControl, incoming: Incoming, event: ServerEvent & { type: "message" }): unknown {
    const { dialogs, runs } = this.#o;
    const message = event.message;
    // The waiting channel questions are being read back (moves made while no queue read): a
    // message that may answer one is matched once its dialog is where the question is now.
    const moved = message.type === "stream" ? this.moves.readBack(message.sender_id) : undefined;
    if (moved !== undefined) return moved.then(() => this.run(control, incoming));
    const self = this.#o.contexts.self ?? { userId: -1 };
    // In a channel topic, a message that begins by naming someone else is said to them.
    if (message.type === "stream" && saidToOther(message.content, self)) return runs.run(control, incoming);
    let read: string | undefined; // What the handler would read, made only when needed.
    const said = () => (read ??= textOf(event as ServerEvent, self));
    const at = { id: message.id, timestamp: message.timestamp, reached: incoming.reachedAt };
    const found = dialogs.match(conversationKey(event as ServerEvent), message.sender_id, at, said);
    if (found === undefined) return runs.run(control, incoming);
    if (found === "duplicate") return this.#handled(control, incoming);
    if ("busy" in found) {
      // A new dialog's first question not yet kept: the message waits (key held, slot given back)
      // until its runs are over, as the failure stage bounds them, then is matched again. Another
      // run out of order: waited for within its own timeout (then it is an ordinary message).
      const busy = found.busy;
      if (busy.asking && control.resumeAfter(whenSettled(busy, control.signal), (c) => this.run(c, incoming)))
        return undefined;
      return whenOver(busy, control.signal).then((over) =>
        over ? this.run(control, incoming) : runs.run(control, incoming),
      );
    }
    if ("ready" in found) {
      // A dialog holding an answer not yet run goes first (it may ask again, kept before the next
      // match; a run that parks ends its task there): the message is matched in the task after.
      const next = (c: TaskControl) =>
        whenSettled(dialogs.entry(found.ready), c.signal).then(() => this.run(c, incoming));
      return this.#retrying(control, () => dialogs.take(found.ready)).then((run) => {
        control.resumeAfter(SETTLED, next);
        return run && this.#resume(control, run);
      });
    }
    if ("late" in found) {
      // Sent after the deadline (caught up after a restart): matched again once the deadline is
      // recorded, before any later message: the prompt's timeout runs first, then it is ordinary.
      const then = (c: TaskControl) => this.run(c, incoming);
      this.#record(control, found.late, () => dialogs.timeOut(found.late), { then }, cameBy(incoming));
      return undefined;
    }
    const { entry } = found;
    const word = this.#o.commands?.named(event, self);
    if (word !== undefined && escapes(entry.head.cmd, word)) {
      // A command the question lets run while it waits: an ordinary message, the question waiting still.
      dialogs.unmatch(entry);
      return runs.run(control, incoming);
    }
    const by = { id: message.sender_id, name: message.sender_full_name };
    const text = said();
    const back = entry.head.back !== undefined && text.toLowerCase() === entry.head.back.toLowerCase();
    const again = (c: TaskControl) => this.#copyOr(c, entry.id, message.id, incoming);
    this.#record(control, entry, () => dialogs.answer(entry, message, text, by, back), {
      answer: incoming,
      again,
    });
    return undefined;
  }

  /**
   * `incoming` (message `msg`), an answer to dialog `id` whose append the log refused: a copy when
   * the log holds it (another writer recorded it, and may have ended the dialog since), else
   * matched again. Cut off by the stop, it is left unmarked: the next start takes it again.
   */
  #copyOr(control: TaskControl, id: string, msg: number, incoming: Incoming): unknown {
    return this.#retrying(control, () => this.#o.dialogs.holdsAnswer(id, msg)).then(
      (copy) => (copy ? this.#handled(control, incoming) : this.run(control, incoming)),
      () => undefined,
    );
  }

  /**
   * `incoming` is handled here, with no run (a copy of an answer recorded; `copy` false: a dead
   * letter done): its ledger mark, the conversation's key held until it is written.
   */
  #handled(control: TaskControl, incoming: Incoming, copy = true): undefined {
    if (copy) this.#o.runs.duplicate();
    const done = this.#o.runs.finished(incoming);
    if (done !== undefined) control.holdKey(done);
    return undefined;
  }

  /**
   * A dead letter of a dialog's failed run, replayed: the dialog's log is begun again from the
   * record the letter carries, and the run goes on from it. A dialog that went on without the
   * letter (run from its log at a start) leaves the letter done.
   */
  #reopened(control: TaskControl, letter: Incoming, carried: DialogRecord): unknown {
    const { dialogs, runs, log } = this.#o;
    return this.#retrying(control, () => dialogs.reopen(carried)).then(
      (dialog) => runs.run(control, { ...letter, dialog }),
      (err: unknown) => {
        if (err instanceof LogMoved || err instanceof DialogEnded) {
          log.info({ dialog: carried.id }, "the dead letter's dialog went on without it: the letter is done");
          return this.#handled(control, letter, false);
        }
        log.warn(
          { err, dialog: carried.id },
          "a dead letter's dialog could not be begun again: the letter stays",
        );
        letter.onReplayed?.(false);
      },
    );
  }

  /**
   * Append an answer (or a deadline) to `entry`'s log with the conversation's key held, trying
   * again until it lands (or the shutdown deadline), then run the dialog as the conversation's next
   * task, before any later message there. `answer`: the message the append records as handled;
   * `then`: what runs next instead (a late message, matched again: it runs the dialog first, then
   * is ordinary), and when the log refuses the append; `again`: what runs next when the log
   * refuses it; `came`: the run's source (its dead letter's), when not the answer's (`deadline`).
   */
  #record(
    control: TaskControl,
    entry: DialogEntry,
    write: () => Promise<DialogRecord>,
    message: { answer?: Incoming; then?: (c: TaskControl) => unknown; again?: (c: TaskControl) => unknown },
    came = cameBy(message.answer),
  ): void {
    const { dialogs, queue, runs, log } = this.#o;
    const conversation = entry.head.conversation;
    const { answer, then, again } = message;
    let next: ((control: TaskControl) => unknown) | undefined;
    const recorded = this.#retrying(control, write).then(
      (record) => {
        failpoint("answer-logged");
        const run = { id: record.id, record, came };
        const known = dialogs.markReady(run);
        // Landed after the stop's deadline (a lease lost): the next start runs it, not this stopped bot.
        if (stoppedBy(control.signal))
          log.info({ dialog: record.id }, "a dialog's write landed after the stop: it runs at next start");
        else if (known) next = then ?? ((c) => this.#readyTask(c, run));
        return answer && Promise.resolve(runs.finished(answer)).then(() => answer.recorded?.());
      },
      (err: unknown) => {
        if (err instanceof DialogEnded || err instanceof LogMoved) {
          // Ended meanwhile, or written by another instance (the dialog is as its log is: see Dialogs): the
          // answer is a copy of one the log holds, or matched again (to the dialog as it is now, or none).
          dialogs.unmatch(entry);
          next = again ?? then;
          return;
        }
        // The stop's deadline cut the tries short: nothing was recorded, the message is not
        // marked handled, and the next start takes it again in its place.
        dialogs.unmatch(entry);
        log[this.#cut.level](
          { err, dialog: entry.id },
          `a dialog's write was cut off by the stop: it is taken again ${this.#cut.where}`,
        );
      },
    );
    const go = (c: TaskControl) => next?.(c);
    // The task already over (timed out), the next one is queued once the append settled.
    if (!control.resumeAfter(recorded, go)) void recorded.then(() => queue.push(conversation, go));
  }

  /**
   * At accept, in event order, an event on conversation `key`: a move of messages (`update_message`,
   * see dialog-moves.ts), or a deletion (`delete_message`, see dialog-deletions.ts). The event goes
   * on to the bot's handlers as any other.
   */
  accepting(event: AnyEvent, key: string): void {
    if (this.#o.dialogs.size === 0) return;
    if (event.type === "update_message") this.moves.moving(event as EventMap["update_message"], key);
    else if (event.type === "delete_message") this.#deleting(event as EventMap["delete_message"]);
  }

  /**
   * Messages deleted: each dialog whose waiting question is among them ends its step, in its
   * conversation's order. So does one whose run is under way, if the question it keeps is among
   * them (sent, its log not yet written): the check waits behind the run.
   */
  #deleting(event: EventMap["delete_message"]): void {
    const ids = deletedIds(event);
    for (const entry of this.#o.dialogs.entries())
      if (entry.running || questionAmong(entry, ids) !== undefined)
        this.#o.queue.push(entry.head.conversation, this.#goneTask, { id: entry.id, ids });
  }

  /**
   * Questions found deleted at a new queue (`ids`, read back: see moved-questions.ts): recorded at
   * once, then each dialog runs (see deleted-at-new-queue.ts).
   */
  goneNow(ids: readonly number[], signal: AbortSignal): Promise<void> {
    return deletedAtNewQueue(this.#o, ids, signal, this.#readyTask);
  }

  #retrying<T>(control: TaskControl, write: () => Promise<T>): Promise<T> {
    return this.#o.dialogs.retrying(control.signal, write);
  }

  /** An operator ends dialog `id`, its person told `note` (dialog-ends.ts); false when there is none. */
  endByOperator(id: string, note: string): Promise<boolean> {
    return endByOperator(this.#o, id, note);
  }

  /** Run dialog `run.record` again from its first message, its log replayed. */
  #resume(control: TaskControl, run: ReadyRun & { record: DialogRecord }): unknown {
    const { record, came } = run;
    const { event, issue } = reviveEvent(record.origin);
    const incoming = { event, replayed: true, issue, reply: undefined, dialog: record, came };
    return this.#o.runs.run(control, incoming);
  }

  /**
   * A dialog holding an answer or a passed deadline (just recorded, or read at start: its log read
   * now), run unless a message of its person ran it first; not while it is ending (kept, it is gone).
   */
  readonly #readyTask = (control: TaskControl, ready: ReadyRun): unknown => {
    const entry = this.#o.dialogs.entry(ready.id);
    if (entry?.ending !== undefined)
      return whenOver(entry, control.signal).then((over) => over && this.#readyTask(control, ready));
    return this.#retrying(control, () => this.#o.dialogs.take(ready.id, ready)).then(
      (run) => run && this.#resume(control, run),
      (err: unknown) =>
        this.#o.log.warn(
          { err, dialog: ready.id },
          "could not read a dialog's log: it runs at the next start",
        ),
    );
  };

  /**
   * A dialog's waiting question was deleted: recorded (as a deadline is), then the dialog runs and
   * its prompt rejects with `PROMPT_DELETED`. Answered, timed out, moved on to another question or
   * ended meanwhile (earlier in the conversation's order), it ignores the deletion.
   */
  readonly #goneTask = (control: TaskControl, gone: { id: string; ids: readonly number[] }): void => {
    const entry = this.#o.dialogs.entry(gone.id);
    const msg = entry && questionAmong(entry, gone.ids);
    if (entry === undefined || msg === undefined) return;
    entry.running = true;
    this.#o.log.info({ dialog: entry.id, message: msg }, "a dialog's waiting question was deleted");
    this.#record(control, entry, () => this.#o.dialogs.timeOut(entry, msg), {});
  };

  /** A deadline passed, not taken by a message matched first: recorded (key held), then the dialog runs. */
  readonly #dueTask = (control: TaskControl, id: string): void => {
    const entry = this.#o.dialogs.entry(id);
    if (!entry?.waiting) return;
    entry.running = true;
    this.#record(control, entry, () => this.#o.dialogs.timeOut(entry), {}, "deadline");
  };
}
