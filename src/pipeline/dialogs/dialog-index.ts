/**
 * The dialogs one process knows, in memory, kept by their one writer (`Dialogs`, dialogs.ts, which
 * extends this class): an entry per dialog, found by its id, by where it waits and for whom
 * (dialog-places.ts), by the message its buttons are on (dialog-reactions.ts), and by its deadline
 * (deadline-timer.ts); and what a message is to them (`match`). Putting an entry in tells the bot
 * which events its queue needs for it (dialog-deletions.ts).
 *
 * A message answers a dialog only if it comes from the person asked (for a question others
 * answer: one of them, or the dialog's person saying the cancel word, see dialog-places.ts), in the
 * dialog's conversation, after the question (its id above the question's) and before the deadline
 * (late only when it reached the bot after it and the server stamped it after it: `lateFor`): one
 * caught up after a restart answers the question open when it was sent, or is an ordinary message.
 */
import { StateError } from "../../state/state-error.ts";
import { RouterError } from "../router-error.ts";
import { NOBODY_KNOWN } from "./ask-options.ts";
import { DeadlineTimer } from "./deadline-timer.ts";
import { eventsWanted } from "./dialog-deletions.ts";
import {
  type Candidate,
  DialogEntry,
  lateFor,
  type Match,
  matched,
  nextSettle,
  settle,
  whenOver,
} from "./dialog-entry.ts";
import { ANYONE, DialogPlaces } from "./dialog-places.ts";
import { Buttons } from "./dialog-reactions.ts";
import type { DialogHead } from "./dialog-record.ts";
import type { DialogsOptions } from "./dialogs-options.ts";

export class DialogIndex {
  protected readonly o: DialogsOptions;
  readonly #byId = new Map<string, DialogEntry>();
  /** Made by the first dialog: most bots never ask. */
  #places: DialogPlaces | undefined;
  /** The waiting questions a reaction answers (emoji choices), by message id. */
  readonly buttons: Buttons;
  protected readonly deadlines: DeadlineTimer;

  constructor(options: DialogsOptions) {
    this.o = options;
    const who = () => options.members ?? NOBODY_KNOWN;
    const reactions = options.wants && (() => options.wants?.("reaction"));
    this.buttons = new Buttons(who, () => options.clock.now(), reactions, options.selfId, options.presses);
    this.deadlines = new DeadlineTimer(options.clock, () => this.entries());
  }

  /** Dialogs known to this process (waiting, or being run). */
  get size(): number {
    return this.#byId.size;
  }

  /** The entry of dialog `id`, if this process knows it. */
  entry(id: string): DialogEntry | undefined {
    return this.#byId.get(id);
  }

  /** Every dialog this process knows. */
  entries(): IterableIterator<DialogEntry> {
    return this.#byId.values();
  }

  /** What `message`, from `userId` in `conversation`, is to the dialogs there (`said`: its text, on demand). */
  match(conversation: string, userId: number, message: Candidate, said?: () => string): Match | undefined {
    // The message that began a dialog, caught up again: its question's append was its commit.
    if (this.#byId.has(String(message.id))) return "duplicate";
    const who = this.o.members ?? NOBODY_KNOWN;
    const now = this.o.clock.now();
    const places = this.#places;
    const entry = places?.at(conversation, userId) ?? places?.openTo(conversation, userId, said, who);
    if (entry !== undefined) return matched(entry, message, now);
    // A question for others there holds an answer (or a deadline) not yet run: it came first, so
    // it runs before any later message there (a new request then finds the question decided).
    const held = places?.at(conversation, ANYONE);
    if (held === undefined) return undefined;
    if (held.ready !== undefined) return held.ending !== undefined ? { busy: held } : { ready: held.id };
    // Its deadline passed before the message was sent (caught up after a restart): the deadline
    // came first, so its run goes first and the message is ordinary after it.
    return held.waiting && lateFor(held.head, message, now) ? matched(held, message, now) : undefined;
  }

  /** Undo {@link match}: nothing was recorded (a stop cut the write short); it waits again, as its header says. */
  unmatch(entry: DialogEntry): void {
    if (!this.current(entry)) return;
    entry.due = false;
    settle(entry);
    if (entry.waiting) this.deadlines.waits(entry);
  }

  /** True when a dialog other than `id` waits for `userId` in `conversation`. */
  busy(conversation: string, userId: number, id: string): boolean {
    const entry = this.#places?.at(conversation, userId);
    return entry !== undefined && entry.id !== id;
  }

  /**
   * As {@link busy}, once the dialog there is past a run of it under way or ready to run (an
   * answer recorded), or an end of it being kept (its last reply said, or an operator's): ended,
   * it waits there no more; asking again, or its end failed, it does. `overdue`: also once past
   * its deadline, its timeout to run (`ctx.startDialog` from a job). Rejects with `signal`'s
   * reason once it aborts (the handler timeout, the stop): the run asking is cut off, not refused;
   * cut by the handler timeout while the store has not answered the end there, with the store's
   * outage, so that the run waits for the store as any run it failed (handler-failures.ts).
   */
  async busyAfter(
    conversation: string,
    userId: number,
    id: string,
    signal: AbortSignal,
    overdue = false,
  ): Promise<boolean> {
    for (;;) {
      const entry = this.#places?.at(conversation, userId);
      if (entry === undefined || entry.id === id) return false;
      const due = overdue && !entry.running && entry.ending === undefined && this.deadlines.overdue(entry);
      if (!(due || entry.running || entry.ending || entry.ready !== undefined)) return true;
      // Overdue, the entry is replaced (or dropped) once its deadline is recorded.
      if (await (due ? nextSettle(entry, signal) : whenOver(entry, signal, true))) continue;
      const reason: unknown = signal.reason;
      const timedOut = reason instanceof RouterError && reason.code === "ROUTER_HANDLER_TIMEOUT";
      if (!timedOut || entry.ending === undefined) throw reason;
      throw new StateError(
        "STATE_UNAVAILABLE",
        `the state store has not answered the end of dialog ${entry.id}, which a question asked there waits for`,
      );
    }
  }

  /** Dialogs waiting for `userId`, in any conversation, but `except` (an earlier attempt's entry). */
  waitingFor(userId: number, except?: string): number {
    let n = 0;
    for (const e of this.#byId.values()) if (e.head.userId === userId && e.id !== except) n++;
    return n;
  }

  /** Whether `entry` is the one this process knows for its dialog (not one replaced or forgotten since). */
  protected current(entry: DialogEntry): boolean {
    return this.#byId.get(entry.id) === entry;
  }

  /**
   * A new entry for the dialog `head` describes, in place of any this process had for it, keeping
   * its end under way (a question its run kept meanwhile takes no answer: see `matched`);
   * `asking`: a new dialog, its first question being asked (see `DialogEntry.asking`).
   */
  protected put(head: DialogHead, asking = false): DialogEntry {
    const old = this.#byId.get(head.id);
    if (old) this.drop(old);
    const entry = new DialogEntry(head, asking, old?.ending);
    this.#byId.set(head.id, entry);
    this.#places ??= new DialogPlaces();
    this.#places.put(entry);
    this.buttons.put(entry);
    if (entry.waiting) this.deadlines.waits(entry);
    for (const type of eventsWanted(entry)) this.o.wants?.(type);
    return entry;
  }

  /**
   * Index the headers a start read (ended ones are not); returns those holding an answer (or a
   * deadline) not yet run, marked ready (their logs read when they run), and those of ended dialogs (a note not known to be said).
   */
  protected index(heads: readonly DialogHead[]): DialogHead[] {
    const ready: DialogHead[] = [];
    for (const head of heads) {
      const entry = head.ended === undefined ? this.put(head) : undefined;
      if (head.waiting) continue;
      if (entry) entry.ready = { id: head.id };
      ready.push(head);
    }
    return ready;
  }

  /** `entry` is known no more: whatever waited for it (a message, a reaction) goes on. */
  protected drop(entry: DialogEntry): void {
    settle(entry);
    this.#byId.delete(entry.id);
    this.#places?.drop(entry);
    this.buttons.drop(entry);
  }

  /**
   * Dialog `id` ended: `entry`, as the end found it, is known no more, nor one put for the dialog
   * since (its run's question kept while the end was written), which would wait there for good.
   */
  protected over(id: string, entry: DialogEntry | undefined): void {
    const since = this.#byId.get(id);
    if (entry !== undefined) this.drop(entry);
    if (since !== undefined && since !== entry) this.drop(since);
  }

  /** Every entry dropped (the bot stops, or loads its dialogs again). */
  protected clear(): void {
    for (const entry of this.#byId.values()) {
      settle(entry);
      this.buttons.drop(entry);
    }
    this.#byId.clear();
    this.#places = undefined;
  }
}
