/**
 * A bot's dialogs: the one writer of their logs (dialog-log.ts) and, in memory (the class it
 * extends, dialog-index.ts), a small entry per dialog so that a message is matched to the dialog
 * waiting for it without a read, and one timer on the daemon's clock for the earliest deadline
 * (deadline-timer.ts). Waiting costs no handler, no
 * slot and no `handler_timeout`: a dialog's handler runs only when an answer (or its deadline)
 * comes, replaying its log.
 */
import type { JsonValue } from "../../state/state-store.ts";
import { wantedAsking } from "./dialog-deletions.ts";
import {
  type Candidate,
  type DialogEntry,
  type DialogView,
  oldest,
  type ReadyRun,
  settle,
  viewOf,
} from "./dialog-entry.ts";
import { DialogIndex } from "./dialog-index.ts";
import { DialogEnded, DialogLog, ENDED_KEPT_MS, LogMoved, type NoteOfLog } from "./dialog-log.ts";
import {
  type AskedIn,
  type DialogHead,
  type DialogRecord,
  type EndNote,
  type EndReason,
  foldLog,
  type LogEntry,
} from "./dialog-record.ts";
import type { AskingRun, DialogSignals, DialogsOptions } from "./dialogs-options.ts";
import { type EndUnderWay, RecentlyEnded } from "./recently-ended.ts";
import { retrying } from "./store-retry.ts";

export type { DialogView } from "./dialog-entry.ts";

/** An entry whose log holds an append, not ending here: its header is in the store unless the store lost it. */
const hadLog = (entry: DialogEntry) => (entry.head.n ?? entry.head.seq) > 0 && entry.ending === undefined;

export class Dialogs extends DialogIndex {
  readonly log: DialogLog;
  /** Dialogs ended since the last load: a run still in flight asks them nothing more. */
  #ended = new RecentlyEnded();
  #on: DialogSignals | undefined;
  /** Aborted when the bot stops: an end no run waits for (an operator's) stops trying then. */
  #live = new AbortController();
  /** When the bot last stopped here: the entries kept since are checked against the store at {@link load}. */
  #pausedAt = Number.NEGATIVE_INFINITY;

  constructor(options: DialogsOptions) {
    super(options);
    this.log = new DialogLog(options.store, options.commit);
  }

  /** The bot's commands by name (`"standup report"` for a subcommand); undefined: no commands. */
  commandNames(): readonly string[] | undefined {
    return this.o.commandNames?.();
  }

  /**
   * Read every dialog's header (at each start: another instance may have written them) and index
   * them, so that answers caught up after a restart find their dialog. Returns in `ready` the
   * headers of dialogs holding an answer (or deadline) not yet run, and of ended dialogs whose note
   * is not known to be said (end-notes.ts): the caller runs or says them once it can. In `lost`,
   * those of dialogs this process knew with a log (the bot stopped here, as a lease lost in a
   * Redis outage stops it) whose header the store no longer has, not even as ended: the store
   * lost them (a Redis restarted without persistence, or flushed).
   */
  async load(): Promise<{ ready: DialogHead[]; lost: DialogHead[] }> {
    const recent = this.o.clock.now() - this.#pausedAt < ENDED_KEPT_MS;
    const before = recent ? [...this.entries()].filter(hadLog).map((e) => e.head) : [];
    this.stop();
    if (!this.o.persist) return { ready: [], lost: [] };
    const found = new Set<string>();
    const ready = this.index(await this.log.heads(found));
    return { ready, lost: before.filter((head) => !found.has(head.id)) };
  }

  /** Wait for the deadlines from now on (one already past fires at once), and for started dialogs. */
  arm(on: DialogSignals): void {
    this.#on = on;
    this.deadlines.arm((entry) => on.due(entry.id, entry.head.conversation));
    this.#live = new AbortController();
  }

  /** Stop the timer (the bot stops; the logs stay); entries stay until the next {@link load}. */
  pause(): void {
    this.#pausedAt = this.o.clock.now();
    this.deadlines.stop();
    this.#on = undefined;
    this.#live.abort();
  }

  /** Aborted once the bot stops: an operator's end stops trying then (dialog-ends.ts). */
  get untilStop(): AbortSignal {
    return this.#live.signal;
  }

  /** Forget the entries and the timer (a message waiting for a dialog's run is matched again). */
  stop(): void {
    this.pause();
    this.clear();
    this.#ended = new RecentlyEnded();
  }

  /**
   * Record `answer` (`text`: what the handler reads) as the answer to the step `entry` waits at
   * (with `back`: as the word that asks the previous question again); resolves the dialog's log
   * as its run replays it.
   */
  answer(
    entry: DialogEntry,
    answer: Candidate,
    text: string,
    by?: { id: number; name: string },
    back = false,
  ) {
    const at = { step: entry.head.step, msg: answer.id, text, ts: answer.timestamp };
    const added: LogEntry = back ? { t: "back", ...at } : { t: "ans", ...at };
    if (by !== undefined && entry.head.from !== undefined) Object.assign(added, { by: by.id, name: by.name });
    return this.#add(entry, added);
  }

  /** The step `entry` waits at ended unanswered (its deadline passed; `gone`: its question deleted). */
  timeOut(entry: DialogEntry, gone?: number): Promise<DialogRecord> {
    const at = { step: entry.head.step, at: this.o.clock.now() };
    return this.#add(entry, gone === undefined ? { t: "late", ...at } : { t: "gone", ...at, msg: gone });
  }

  /** Append `added` to `entry`'s log while the log so far is read: one store round trip for both. */
  async #add(entry: DialogEntry, added: LogEntry): Promise<DialogRecord> {
    const appended = this.#appendTo(entry, this.log.append(entry.head, [added]));
    const [next, before] = await Promise.all([appended, this.log.entries(entry.head)]);
    if (this.current(entry)) entry.head = next;
    return foldLog(next, [...before, added]);
  }

  /**
   * `append`, an append to `entry`'s log, refused for good. As ended (an end that landed though its
   * writer was told it failed, as a lost reply tells it), the entry goes, so that the dialog waits
   * for nothing more here (no deadline fires again, no message is matched to it, it is not
   * listed). As moved (another writer appended meanwhile: a second instance on the same store, as
   * during a takeover), the entry is read again from the store (`#reread`). Left as it
   * was, either would wait on at a step its log has left: a passed deadline would fire again at
   * once, refused again, in a tight loop, and each answer would be refused.
   */
  #appendTo<T>(entry: DialogEntry, append: Promise<T>): Promise<T> {
    return append.catch(async (err: unknown) => {
      if (err instanceof DialogEnded && this.current(entry)) this.drop(entry);
      if (err instanceof LogMoved && this.current(entry)) await this.#reread(entry);
      throw err;
    });
  }

  /**
   * `entry`'s log moved under this process: its entry is made again from the header the store
   * holds now, as a start reads it (waiting at the question the log is at, by that question's
   * deadline; or holding an answer or a deadline not yet run, which runs here in its
   * conversation's order (`DialogSignals.ready`), as the writer that recorded it may have stopped
   * first: should it run there too, the log keeps one run's question and refuses the other's), or
   * dropped when the dialog ended or its log is gone. A failed read rejects with the store's
   * error: the write is tried again, refused again, and the header read again.
   */
  async #reread(entry: DialogEntry): Promise<void> {
    const on = this.#on;
    const head = await this.log.head(entry.id);
    if (!this.current(entry)) return;
    if (head === undefined || head.ended !== undefined) return this.drop(entry);
    const known = this.put(head);
    if (head.waiting) return;
    known.ready = { id: head.id };
    on?.ready(known.ready, head.conversation);
  }

  /** Dialog `id`'s log, folded, as its run replays it; `fresh`: its header read again from the store. */
  async record(id: string, fresh = false): Promise<DialogRecord | undefined> {
    const entry = this.entry(id);
    const head = fresh || entry === undefined ? await this.log.head(id) : entry.head;
    if (head === undefined || head.ended !== undefined) return undefined;
    if (fresh && entry !== undefined) entry.head = head;
    return this.log.read(head);
  }

  /**
   * Whether dialog `id`'s log holds the answer of message `msg` (for a reaction: of question `msg`):
   * by its header as this process knows it, else as the store keeps it (an ended dialog's, for a
   * while: dialog-log.ts). An answer whose append the log refused (ended, or moved by a second
   * instance on the same store) is a copy when it does: the other writer took it first.
   */
  async holdsAnswer(id: string, msg: number): Promise<boolean> {
    const head = this.entry(id)?.head ?? (await this.log.head(id));
    return head?.answered.includes(msg) === true;
  }

  /** `run` (an answer or deadline just written) runs before the next message there; false when its dialog is not known. */
  markReady(run: ReadyRun): boolean {
    const entry = this.entry(run.id);
    if (entry === undefined) return false;
    entry.ready = run;
    settle(entry);
    return true;
  }

  /**
   * The run dialog `id` is ready for, taken (once; with `which`, only if it is that one), its log
   * read when it was read at start. Undefined when another task took it.
   */
  async take(id: string, which?: ReadyRun): Promise<(ReadyRun & { record: DialogRecord }) | undefined> {
    const entry = this.entry(id);
    const ready = entry?.ready;
    if (entry === undefined || ready === undefined || (which !== undefined && ready !== which))
      return undefined;
    entry.ready = undefined;
    entry.running = true;
    if (ready.record !== undefined) return { ...ready, record: ready.record };
    try {
      const record = await this.record(id);
      return record && { ...ready, record };
    } catch (err) {
      // Not read: the next message there (or the next start) tries again.
      entry.ready = ready;
      settle(entry);
      throw err;
    }
  }

  /**
   * Record that the question `entry` waits at moved from conversation `was` to `to`: the dialog
   * waits there from now on. Rejects as an answer's append does (see {@link answer}).
   */
  async move(entry: DialogEntry, was: string, to: AskedIn): Promise<void> {
    entry.running = true;
    const move: LogEntry = { t: "move", was, to, at: this.o.clock.now() };
    const next = await this.#appendTo(entry, this.log.append(entry.head, [move]));
    if (this.current(entry)) this.put(next);
  }

  /** Dialog `record`, a dead letter's (its log ended as failed), goes on: its log begun again from it. */
  async reopen(record: DialogRecord): Promise<DialogRecord> {
    if (!this.o.persist) return record;
    const next = await this.log.reopen(record, this.o.clock.now());
    this.#ended.delete(record.id);
    this.put(next).running = true;
    return this.log.read(next);
  }

  /**
   * A question of dialog `head` is about to be sent to conversation `askIn`: the events its bot's
   * queue needs for it there are asked for now, before the send (dialog-deletions.ts). A new
   * dialog (`fresh`, its first question) is known from now: until its log is kept ({@link append})
   * or its message's runs give up ({@link notAsking}: the attempts after one the handler timeout cut
   * run outside the conversation's order), the person's next message there waits for it (`busy`).
   */
  asking(head: DialogHead, askIn: string, fresh: boolean): void {
    if (!this.o.persist) return;
    for (const type of wantedAsking(askIn)) this.o.wants?.(type);
    // Begun by an earlier run of this message (a replayed letter, or an earlier attempt): it stays.
    if (fresh && this.entry(head.id) === undefined) this.put(head, true);
  }

  /** The runs of the message that began dialog `id` ({@link asking}) ended, its log not kept: not begun. */
  notAsking(id: string): void {
    const entry = this.entry(id);
    if (entry?.asking) this.drop(entry);
  }

  /**
   * Append `entries` (a run's values, effects and question; with `create`, its first) to the log
   * of the dialog `head` describes, then wait for its answer; for a `run`, tried again while the
   * store fails, until its signal aborts. Rejects with `DialogEnded` once the dialog was ended (a
   * run in flight stops there). `run.earlier`: the question's message, sent by an earlier run.
   * Refused, the entry goes as {@link #appendTo} says: read again when another writer's run of
   * the same step kept its question first, forgotten when ended.
   */
  async append(head: DialogHead, entries: readonly LogEntry[], create: boolean, run?: AskingRun) {
    if (!this.o.persist) return head;
    if (this.isEnded(head.id)) throw new DialogEnded(head.id);
    const write = () => this.log.append(head, entries, create);
    const written = run ? this.retrying(run.signal, write) : write();
    const known = this.entry(head.id);
    const next = await (known ? this.#appendTo(known, written) : written);
    const entry = this.put(next);
    if (!next.waiting) entry.running = true;
    else if (run?.earlier !== undefined && next.asked === run.earlier)
      this.#on?.kept(next.id, next.conversation, run.earlier);
    return next;
  }

  /** `write` tried again while the store fails, until `signal` aborts (or `tries` were made). */
  retrying<T>(signal: AbortSignal, write: () => Promise<T>, tries?: number): Promise<T> {
    return retrying({ clock: this.o.clock, log: this.o.log, health: this.o.health }, signal, write, tries);
  }

  /**
   * A dialog the bot starts itself (`ctx.startDialog`, in a run that `came` so): its log begun, then
   * run as one holding an answer. False when a dialog of the same id exists (or existed), or another
   * waits for the person there: the check and the reservation are one step, so two starts cannot
   * both pass. One another writer began first is read from its log, as a refused append's entry is.
   */
  async begin(head: DialogHead, origin: JsonValue, came: ReadyRun["came"]): Promise<boolean> {
    if (this.busy(head.conversation, head.userId, head.id) || this.entry(head.id) !== undefined) return false;
    const start: LogEntry = { t: "start", origin, at: head.startedAt };
    const entry = this.put(head);
    entry.running = true;
    let next = head;
    if (this.o.persist) {
      try {
        next = await this.#appendTo(entry, this.log.append(head, [start], true));
      } catch (err) {
        if (err instanceof LogMoved || err instanceof DialogEnded) return false;
        if (this.current(entry)) this.drop(entry);
        throw err;
      }
    }
    entry.head = next;
    settle(entry);
    entry.ready = { id: head.id, record: foldLog(next, [start]), came };
    this.#on?.ready(entry.ready, head.conversation);
    return true;
  }

  /** The end of dialog `id` under way here, if one is (see `end`). */
  endUnderWay(id: string): EndUnderWay | undefined {
    return this.#ended.underWay(id);
  }

  /** True once dialog `id` is ending or ended (in this process): its runs ask nothing more. */
  isEnded(id: string): boolean {
    return this.#ended.has(id) || this.entry(id)?.ending !== undefined;
  }

  /**
   * End dialog `id` (answered to its end, failed, cancelled, ended by an operator): an end entry
   * is its log's last, and its header refuses any later append. While the store fails the end is
   * tried again, the same entry each time (one that landed with its reply lost is found made),
   * until `signal` aborts; until then the dialog is ending: nothing of it runs, its runs ask
   * nothing more, no answer or deadline is recorded. False when it had ended already. `logged`:
   * the note as the log the end goes after makes it (see `DialogLog.close`).
   */
  end(id: string, by: EndReason, signal: AbortSignal, note?: EndNote, logged?: NoteOfLog): Promise<boolean> {
    const entry = this.entry(id);
    const close = (end: LogEntry) => this.retrying(signal, () => this.#close(id, end, logged));
    const ending = this.#ended.once(id, by, this.o.clock.now(), close, note);
    if (entry) entry.ending = ending;
    // Given up (the stop): the dialog goes on as it was, also the entry that a question its run
    // kept meanwhile made.
    ending.catch(() => {
      for (const known of [entry, this.entry(id)]) if (known?.ending === ending) known.ending = undefined;
    });
    return ending;
  }

  async #close(id: string, end: LogEntry, logged?: NoteOfLog): Promise<boolean> {
    const entry = this.entry(id);
    const ended = this.o.persist ? await this.log.close(id, entry?.head, end, logged) : entry !== undefined;
    this.over(id, entry);
    // Kept while a run in flight may still try to ask: the newest ends, a bounded few.
    if (ended) this.#ended.add(id);
    return ended;
  }

  /** The `limit` oldest dialogs this process knows (all by default), oldest first. */
  list(limit = Number.POSITIVE_INFINITY): DialogView[] {
    return oldest(this.entries(), limit).map(viewOf);
  }
}
