/**
 * The dispatcher's side of dialogs: which message is an answer (taken before any handler), when
 * a dialog runs again (its answer, its deadline, a start that found it holding an answer), and how
 * a dialog's run that failed in a way only dialogs have (cut off by a stop, code changed under it)
 * ends. A dialog's run itself is an ordinary run of its first message (`runTurn`), on its
 * conversation's key, so it keeps its place in the conversation's order.
 */
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { sleep } from "../../api/sleep.ts";
import { EffectOrderChanged } from "../../effects/effect-records.ts";
import { type AnyEvent, isTypedEvent, reviveEvent, type ServerEvent } from "../../wire/events.ts";
import type { BotContexts } from "../bot-contexts.ts";
import { conversationKey } from "../conversation-key.ts";
import type { ConversationQueue, TaskControl } from "../conversation-queue.ts";
import type { Incoming } from "../incoming.ts";
import { replyTarget } from "../reply-target.ts";
import { RouterError } from "../router-error.ts";
import { whenSettled } from "./dialog-entry.ts";
import type { DialogRecord } from "./dialog-record.ts";
import type { Dialogs } from "./dialogs.ts";
import { DialogChanged, type Turn } from "./turn.ts";

export interface DialogRunsParts {
  dialogs: Dialogs;
  queue: ConversationQueue;
  contexts: BotContexts;
  log: Logger;
  /** Stage 4 for a dialog's run (the dispatcher's, with a turn). */
  runTurn(control: TaskControl, incoming: Incoming): unknown;
  /** Stage 4 for a message, dialogs included (after a dialog that had to go first). */
  run(control: TaskControl, incoming: Incoming): unknown;
  /**
   * Stage 5 for a message taken as an answer, or a dialog's run that ended here: what its key
   * must wait for (the ledger's record made durable), if anything.
   */
  done(incoming: Incoming): Promise<unknown> | undefined;
  /** Counts a copy of an answer already recorded. */
  duplicate(): void;
}

/** What {@link DialogRuns.answer} returns for a message that answers no dialog. */
export const NOT_AN_ANSWER = Symbol("not an answer");

/**
 * Pauses between writes of a dialog the store failed: about 15 s in all. The writes hold the
 * conversation's key, not a handler: `handler_timeout` does not cut them short, the shutdown
 * deadline does.
 */
const STORE_RETRY_MS = [250, 500, 1_000, 2_000, 4_000, 8_000];

const CHANGED_NOTE = "Sorry, the bot was updated in the middle of our conversation: please start again.";

export class DialogRuns {
  readonly #o: DialogRunsParts;
  /** Dialogs read at start that hold an answer not yet handled: run at {@link start}. */
  #ready: DialogRecord[] = [];

  constructor(parts: DialogRunsParts) {
    this.#o = parts;
  }

  /**
   * Read the bot's dialogs (at each start, after the ledger): answers caught up from here on find
   * the dialog they answer. False when `signal` aborted meanwhile.
   */
  async open(signal: AbortSignal): Promise<boolean> {
    const ready = await this.#o.dialogs.load();
    if (signal.aborted) return false;
    this.#ready = ready;
    return true;
  }

  /** The bot runs handlers: dialogs holding an answer run, and deadlines are waited for. */
  start(): void {
    const { queue, dialogs } = this.#o;
    const ready = this.#ready;
    this.#ready = [];
    for (const record of ready) queue.push(record.conversation, this.#readyTask, record);
    dialogs.arm((id, conversation) => queue.push(conversation, this.#dueTask, id));
  }

  /**
   * A message a dialog may wait for: recorded as that dialog's answer (then handled), and the
   * dialog run; a copy of the answer last recorded is a duplicate. Else {@link NOT_AN_ANSWER}.
   */
  answer(control: TaskControl, incoming: Incoming): unknown {
    const { event, issue } = incoming;
    if (event.type !== "message" || !isTypedEvent(event, issue)) return NOT_AN_ANSWER;
    const message = (event as ServerEvent & { type: "message" }).message;
    const { dialogs } = this.#o;
    const found = dialogs.match(conversationKey(event as ServerEvent), message.sender_id, message.id);
    if (found === undefined) return NOT_AN_ANSWER;
    if (found === "duplicate") {
      this.#o.duplicate();
      const recorded = this.#o.done(incoming);
      if (recorded !== undefined) control.holdKey(recorded);
      return undefined;
    }
    if ("busy" in found) {
      // A run of the dialog is under way out of the conversation's order (it outlived its handler
      // timeout, or runs again after a failure): the message waits for it to ask or end, as it
      // would have in order, then is matched again. Cut off by its own timeout, it is no answer.
      return whenSettled(found.busy, control.signal).then((over) =>
        over ? this.#o.run(control, incoming) : this.#o.runTurn(control, incoming),
      );
    }
    if ("ready" in found) {
      // A dialog holding an answer not yet handled (read at start, or just recorded) goes first:
      // it may ask again.
      const record = dialogs.claimReady(found.ready);
      return Promise.resolve(record && this.#resume(control, record)).then(() =>
        this.#o.run(control, incoming),
      );
    }
    const { entry } = found;
    // Recorded while the key is held, not inside this task: a store outage can outlast the
    // handler timeout, and no later message of the conversation may be matched before the
    // answer is in the record (it would miss the dialog that is about to ask it something).
    control.holdKey(
      this.#retrying(control, () => dialogs.answer(entry.id, message)).then(
        (record) => {
          // Recorded (committed): the answer is handled, whatever the dialog's run does next.
          if (record) this.#runNext(record);
          return this.#o.done(incoming);
        },
        (err: unknown) => {
          // The store stayed unreachable: the dialog waits again, and the message, not recorded
          // as handled, is caught up again at the next start.
          dialogs.unmatch(entry, message.id);
          this.#o.log.error(
            { err, dialog: entry.id },
            "could not record a dialog's answer: it waits for it again",
          );
        },
      ),
    );
    return undefined;
  }

  /**
   * Run dialog `record`, which holds an answer (or a deadline) not yet handled, in a task of its
   * own behind the key's hold: with a whole handler timeout of its own, and before any later
   * message of the person's there (that message finds it ready and runs it first).
   */
  #runNext(record: DialogRecord): void {
    this.#o.dialogs.markReady(record);
    this.#o.queue.push(record.conversation, this.#readyTask, record);
  }

  /**
   * `write`, again after pauses while the store fails (a Redis outage), until the pauses run out
   * or `control`'s signal aborts (the shutdown deadline); rejects with the last error.
   */
  async #retrying<T>(control: TaskControl, write: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        const pause = STORE_RETRY_MS[attempt];
        if (pause === undefined || control.signal.aborted) throw err;
        this.#o.log.warn({ err, retryInMs: pause }, "the state store failed a dialog's write; trying again");
        await sleep(this.#o.contexts.clock, pause, control.signal).catch(() => {});
      }
    }
  }

  /** A dialog's run returned: the dialog is over. */
  ended(control: TaskControl, incoming: Incoming): void {
    if (incoming.dialog) control.holdKey(this.end(incoming.dialog.id));
  }

  /**
   * A message's run threw what only a dialog's run meets: cut off by a stop, or code changed under
   * its record. True when handled here; false for any other failure (retried as usual).
   */
  failed(
    control: TaskControl,
    incoming: Incoming,
    log: Logger,
    turn: Turn | undefined,
    err: unknown,
  ): boolean {
    const dialog = incoming.dialog;
    const asked = dialog !== undefined || (turn !== undefined && turn.step > 0);
    if (asked && incoming.letter === undefined && isShutdownAbort(err)) {
      // Left as a crash leaves it: its message is caught up again (or its record, holding the
      // answer, is replayed) at the next start, in its place among the person's messages. A dead
      // letter would replay it only after them.
      log.info(
        { dialog: dialog?.id },
        "a dialog's run was cut off by the stop: it runs again at the next start",
      );
      return true;
    }
    if (dialog === undefined || !(err instanceof DialogChanged || err instanceof EffectOrderChanged))
      return false;
    // Stopped, and the person told, rather than file an answer under another question.
    const step = err instanceof DialogChanged ? err.step : (turn?.step ?? 0);
    log.warn(
      { dialog: dialog.id, user: dialog.userName, userId: dialog.userId, step, reason: err.message },
      "the bot's code no longer matches this dialog (changed since it began): the dialog was stopped",
    );
    const told = this.end(dialog.id).then(() => this.#tell(dialog, CHANGED_NOTE));
    control.holdKey(Promise.all([told, this.#o.done(incoming)]));
    return true;
  }

  /** Delete a dialog's record; a failure is logged (the next start runs the dialog again). */
  end(id: string): Promise<unknown> {
    return this.#o.dialogs.end(id).catch((err: unknown) => {
      this.#o.log.error({ err, dialog: id }, "could not delete an ended dialog's record");
    });
  }

  /**
   * An operator ends dialog `id`: its record goes (in its conversation's order), and the person
   * is told `note`. False when there is no such dialog.
   */
  async endByOperator(id: string, note: string): Promise<boolean> {
    const record = await this.#o.dialogs.get(id);
    if (record === undefined) return false;
    return new Promise((resolve, reject) => {
      this.#o.queue.push(record.conversation, () =>
        this.#o.dialogs.end(id).then(async (existed) => {
          if (existed) await this.#tell(record, note);
          resolve(existed);
        }, reject),
      );
    });
  }

  /**
   * Start, in a direct message with `userId`, the dialog that the message `text` from them would
   * start: the bot's handlers run on that message as if they had sent it (a command, say), and
   * its prompts ask them. `key` makes the start once-only: the same key starts nothing again.
   * The dialog is kept before it runs, so a crash runs it at the next start. Resolves false when
   * a dialog of that key exists already, or another one is under way with the person there.
   */
  async begin(userId: number, text: string, key: string): Promise<boolean> {
    const { contexts, dialogs } = this.#o;
    const self = contexts.self;
    if (self === undefined) throw new Error("a dialog can start only once the bot has registered");
    const id = startId(key);
    if (await dialogs.get(String(id))) return false;
    const user = await contexts.deps().services?.users.get(userId);
    const name = user?.full_name ?? `user ${userId}`;
    const now = contexts.clock.now();
    const event = {
      id: -1,
      type: "message",
      flags: ["read"],
      message: {
        id,
        type: "private",
        sender_id: userId,
        sender_email: user?.email ?? "",
        sender_full_name: name,
        content: text,
        display_recipient: [
          { id: userId, email: user?.email ?? "", full_name: name },
          { id: self.userId, email: self.email, full_name: self.fullName ?? self.email },
        ],
        subject: "",
        recipient_id: 0,
        timestamp: Math.floor(now / 1000),
        client: "bothost",
        content_type: "text/x-markdown",
      },
    };
    const conversation = conversationKey(event as unknown as ServerEvent);
    // One dialog at a time per person and conversation: the one under way goes on.
    if (dialogs.busy(conversation, userId, String(id))) return false;
    const record: DialogRecord = {
      v: 1,
      id: String(id),
      userId,
      userName: name,
      conversation,
      where: "direct message",
      origin: event,
      startedAt: now,
      steps: [],
      waiting: false,
      values: [],
      effects: [],
    };
    await dialogs.begin(record);
    this.#o.queue.push(record.conversation, this.#readyTask, record);
    return true;
  }

  /** Run dialog `record` again from its first message, its answers recorded. */
  #resume(control: TaskControl, record: DialogRecord): unknown {
    const { event, issue } = reviveEvent(record.origin);
    return this.#o.runTurn(control, { event, replayed: true, issue, reply: undefined, dialog: record });
  }

  /**
   * A dialog holding an answer or a passed deadline to handle (read at start, or just recorded),
   * unless a message of its person ran it first.
   */
  readonly #readyTask = (control: TaskControl, record: DialogRecord): unknown =>
    this.#o.dialogs.claimReady(record.id, record) && this.#resume(control, record);

  /**
   * A dialog's deadline passed: recorded (the key held, as for an answer), then the dialog runs
   * (its prompt rejects).
   */
  readonly #dueTask = (control: TaskControl, id: string): void => {
    control.holdKey(
      this.#retrying(control, () => this.#o.dialogs.timeOut(id)).then(
        (record) => {
          if (record) this.#runNext(record);
        },
        (err: unknown) => {
          this.#o.log.error(
            { err, dialog: id },
            "could not record a dialog's deadline: it runs at the next start",
          );
        },
      ),
    );
  };

  /** Say `text` to a dialog's person, in its conversation. */
  async #tell(dialog: DialogRecord, text: string): Promise<void> {
    const { event } = reviveEvent(dialog.origin);
    const { contexts } = this.#o;
    try {
      await contexts.deps().api.messages.send({
        ...replyTarget(event as AnyEvent, undefined, contexts.self?.userId ?? -1),
        content: text,
      });
    } catch (err) {
      this.#o.log.warn({ err, dialog: dialog.id }, "could not tell the person their dialog ended");
    }
  }
}

/**
 * The id of a started dialog's first message: negative (no server message has one), the same for
 * the same key.
 */
function startId(key: string): number {
  const digest = createHash("sha256").update(key).digest();
  return -(digest.readUIntBE(0, 6) + 1);
}

/** The abort of a handler still running at the shutdown deadline. */
function isShutdownAbort(err: unknown): boolean {
  return err instanceof RouterError && err.code === "ROUTER_ABORTED";
}
