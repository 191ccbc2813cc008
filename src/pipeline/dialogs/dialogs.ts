/**
 * A bot's dialogs: the records in its store (dialog-record.ts) and, in memory, a small entry per
 * dialog so that a message is matched to the dialog waiting for it without a read, and one timer on
 * the daemon's clock for the earliest deadline. Waiting costs no handler, no slot and no
 * `handler_timeout`: a dialog's handler runs only when an answer (or its deadline) comes, replaying
 * from its record.
 *
 * Each change of a record is committed (it survives a kill -9) before what it stands for is acted
 * on: an answer is recorded before its message counts as handled, a question's step before the
 * message that asked it does.
 */
import type { Logger } from "pino";
import type { StateStore } from "../../state/state-store.ts";
import type { Clock, TimerHandle } from "../../time/clock.ts";
import type { Message } from "../../wire/records.ts";
import { type DialogEntry, entryKey, oldest, settle } from "./dialog-entry.ts";
import { asRecord, type DialogRecord, waitingStep } from "./dialog-record.ts";

export interface DialogsOptions {
  /** The bot's `dialogs` namespace. */
  store: StateStore;
  /** Makes the store's writes survive a crash of this process. */
  commit(): Promise<void>;
  clock: Clock;
  log: Logger;
  /** False in a backtest: a dialog's first question ends the run, nothing is kept. */
  persist: boolean;
}

/** A dialog as operators see it (`bothost status`, `bothost dialogs`). */
export interface DialogView {
  id: string;
  userId: number;
  userName: string;
  where: string;
  /** The prompt it is at, from 1. */
  step: number;
  /** ISO 8601: the first question. */
  since: string;
  /** ISO 8601; undefined while an answer is being handled. */
  deadline: string | undefined;
}

/**
 * What {@link Dialogs.match} found for a message: the dialog it answers, a dialog to replay first
 * (`ready`: it holds an answer not yet handled), a dialog whose run is under way out of the
 * conversation's order (`busy`: it outlived its handler timeout), a copy of the last answer, or
 * nothing.
 */
export type Match =
  | { entry: DialogEntry }
  | { ready: string }
  | { busy: DialogEntry }
  | "duplicate"
  | undefined;

export class Dialogs {
  readonly #o: DialogsOptions;
  /** Made by the first dialog: most bots never ask. */
  #byKey: Map<string, DialogEntry> | undefined;
  readonly #byId = new Map<string, DialogEntry>();
  #onDue: ((id: string, conversation: string) => void) | undefined;
  /**
   * One timer for every deadline, set for the earliest waiting one: a timer per dialog cost about
   * 600 bytes each (Node keeps a list per distinct delay), 6 MB for 10,000 waiting dialogs. When
   * it fires, one pass over the entries takes every due dialog and finds the next deadline.
   */
  #timer: TimerHandle | undefined;
  /** When {@link #timer} fires (epoch ms); Infinity while none is set. */
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(options: DialogsOptions) {
    this.#o = options;
  }

  /** Dialogs known to this process (waiting, or being replayed). */
  get size(): number {
    return this.#byId.size;
  }

  /**
   * Read every record (at each start: another instance may have changed them) and index them, so
   * that answers caught up after a restart find their dialog. Returns the records that hold an
   * answer not yet replayed: the caller replays them once the bot can run handlers.
   */
  async load(): Promise<DialogRecord[]> {
    this.stop();
    if (!this.#o.persist) return [];
    const ready: DialogRecord[] = [];
    for (const { value } of await this.#o.store.list()) {
      const record = asRecord(value);
      if (record === undefined) continue;
      this.#index(record).ready = record.waiting ? undefined : record;
      if (!record.waiting) ready.push(record);
    }
    return ready;
  }

  /**
   * Wait for the deadlines from now on (one already past fires at once): `onDue(id, conversation)`
   * is told when one passes.
   */
  arm(onDue: (id: string, conversation: string) => void): void {
    this.#onDue = onDue;
    this.#clearTimer();
    const next = this.#sweep(undefined);
    if (next !== Number.POSITIVE_INFINITY) this.#setTimer(next);
  }

  /**
   * Stop the timers (the bot stops; the records stay). The entries stay until the next
   * {@link load}: an answer still queued at the stop is matched all the same.
   */
  pause(): void {
    this.#clearTimer();
    this.#onDue = undefined;
  }

  /** Forget the entries and their timers (a message waiting for a dialog's run is matched again). */
  stop(): void {
    this.#clearTimer();
    for (const entry of this.#byId.values()) settle(entry);
    this.#byId.clear();
    this.#byKey = undefined;
    this.#onDue = undefined;
  }

  /**
   * A message from `userId` in `conversation`: the waiting dialog it answers (now no longer
   * waiting), `"duplicate"` for an answer already recorded, else undefined.
   */
  match(conversation: string, userId: number, messageId: number): Match {
    const entry = this.#byKey?.get(entryKey(conversation, userId));
    if (entry === undefined) return undefined;
    // The dialog's first message, caught up again after a crash, is no answer either.
    if (messageId <= entry.origin || entry.answered.includes(messageId)) return "duplicate";
    if (entry.ready !== undefined) return { ready: entry.id };
    if (entry.running) return { busy: entry };
    if (!entry.waiting) return undefined;
    entry.waiting = false;
    entry.running = true;
    entry.answered.push(messageId);
    return { entry };
  }

  /** Undo {@link match}: the answer could not be recorded, so the dialog waits for one again. */
  unmatch(entry: DialogEntry, messageId: number): void {
    if (this.#byId.get(entry.id) !== entry) return;
    entry.answered = entry.answered.filter((id) => id !== messageId);
    entry.waiting = true;
    settle(entry);
    if (this.#onDue !== undefined && entry.deadline < this.#timerAt) this.#setTimer(entry.deadline);
  }

  /**
   * `record` (just written) holds an answer or a passed deadline to replay: the next message of
   * its person there runs it first, unless a task claims it before (see {@link claimReady}).
   */
  markReady(record: DialogRecord): void {
    const entry = this.#byId.get(record.id);
    if (entry === undefined) return;
    entry.ready = record;
    settle(entry);
  }

  /**
   * The record dialog `id` is ready to replay, taken (once); with `record`, only if it is that
   * one (a task made for an earlier answer finds a later one's replay no longer its own).
   */
  claimReady(id: string, record?: DialogRecord): DialogRecord | undefined {
    const entry = this.#byId.get(id);
    const ready = entry?.ready;
    if (entry === undefined || ready === undefined || (record !== undefined && ready !== record))
      return undefined;
    entry.ready = undefined;
    entry.running = true;
    return ready;
  }

  /** True when a dialog other than `id` waits for `userId` in `conversation`. */
  busy(conversation: string, userId: number, id: string): boolean {
    const entry = this.#byKey?.get(entryKey(conversation, userId));
    return entry !== undefined && entry.id !== id;
  }

  /** The record of dialog `id`, if it still exists. */
  async get(id: string): Promise<DialogRecord | undefined> {
    return asRecord(await this.#o.store.get(id));
  }

  /** Record `message` as the answer to the step the dialog waits at; undefined when it waits no more. */
  async answer(id: string, message: Message): Promise<DialogRecord | undefined> {
    const record = await this.get(id);
    const step = record && waitingStep(record);
    if (record === undefined || step === undefined) return undefined;
    step.answers.push(message);
    record.waiting = false;
    await this.#save(record);
    return record;
  }

  /** The deadline passed: record it (once); undefined when the dialog no longer waits or is not due. */
  async timeOut(id: string): Promise<DialogRecord | undefined> {
    const record = await this.get(id);
    const step = record && waitingStep(record);
    if (record === undefined || step === undefined) return undefined;
    if (step.deadline > this.#o.clock.now()) {
      // Moved (another instance asked again): wait for the new deadline.
      this.#index(record);
      return undefined;
    }
    step.timedOut = true;
    record.waiting = false;
    await this.#save(record);
    return record;
  }

  /** A run of the dialog waits for an answer now: keep its record, then wait for its deadline. */
  async park(record: DialogRecord): Promise<void> {
    record.waiting = true;
    if (!this.#o.persist) return;
    await this.#save(record);
    this.#index(record);
  }

  /**
   * A message's run asks the first question of dialog `record` now: until the record is kept
   * ({@link park}) or the run gives up ({@link notAsking}), the person's next message there
   * waits for it (`busy`), even past the run's handler timeout.
   */
  asking(record: DialogRecord): void {
    if (!this.#o.persist) return;
    const entry = this.#index({ ...record, waiting: false });
    entry.step = 0;
    entry.running = true;
  }

  /** The run {@link asking} failed before its record was kept: the dialog is not begun. */
  notAsking(id: string): void {
    const entry = this.#byId.get(id);
    if (entry?.running && entry.answered.length === 0 && entry.deadline === 0) this.#forget(entry);
  }

  /** A dialog the bot starts itself (`ctx.startDialog`): kept, then run as one read at start. */
  async begin(record: DialogRecord): Promise<void> {
    if (!this.#o.persist) return;
    await this.#save(record);
    this.#index(record).ready = record;
  }

  /** The dialog ended (answered to its end, failed, cancelled or ended by an operator). */
  async end(id: string): Promise<boolean> {
    const entry = this.#byId.get(id);
    if (entry) this.#forget(entry);
    if (!this.#o.persist) return entry !== undefined;
    const existed = await this.#o.store.delete(id);
    await this.#o.commit();
    return existed;
  }

  /**
   * The `limit` oldest dialogs this process knows (all by default), oldest first. A status page
   * asks for a few of possibly thousands: they are picked in one pass, the rest never sorted.
   */
  list(limit = Number.POSITIVE_INFINITY): DialogView[] {
    return oldest(this.#byId.values(), limit).map((e) => ({
      id: e.id,
      userId: e.userId,
      userName: e.userName,
      where: e.where,
      step: e.step + 1,
      since: new Date(e.since).toISOString(),
      deadline: e.waiting ? new Date(e.deadline).toISOString() : undefined,
    }));
  }

  async #save(record: DialogRecord): Promise<void> {
    await this.#o.store.set(record.id, record as never);
    await this.#o.commit();
  }

  #index(record: DialogRecord): DialogEntry {
    const old = this.#byId.get(record.id);
    if (old) this.#forget(old);
    const last = record.steps.at(-1);
    const key = entryKey(record.conversation, record.userId);
    const entry: DialogEntry = {
      id: record.id,
      key,
      conversation: record.conversation,
      userId: record.userId,
      userName: record.userName,
      where: record.where,
      since: record.startedAt,
      origin: Number(record.id),
      step: record.steps.length - 1,
      deadline: last?.deadline ?? 0,
      waiting: record.waiting,
      answered: record.steps.flatMap((step) => step.answers.map((m) => m.id)),
      ready: undefined,
      running: false,
      onSettled: undefined,
    };
    this.#byId.set(record.id, entry);
    this.#byKey ??= new Map();
    this.#byKey.set(key, entry);
    if (entry.waiting && this.#onDue !== undefined && entry.deadline < this.#timerAt)
      this.#setTimer(entry.deadline);
    return entry;
  }

  #setTimer(at: number): void {
    const clock = this.#o.clock;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        const due: DialogEntry[] = [];
        const next = this.#sweep(due);
        if (next !== Number.POSITIVE_INFINITY) this.#setTimer(next);
        // Several are due at once after a pause (or a slow turn): the earliest first.
        due.sort((x, y) => x.deadline - y.deadline);
        for (const entry of due) {
          entry.waiting = false;
          this.#onDue?.(entry.id, entry.conversation);
        }
      },
      Math.max(0, at - clock.now()),
    );
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  /**
   * The earliest deadline of the waiting dialogs (Infinity: none); with `due`, the dialogs whose
   * deadline passed are put there instead. An answered or forgotten dialog needs no change of the
   * timer: a pass that finds nothing due only sets it for the next deadline.
   */
  #sweep(due: DialogEntry[] | undefined): number {
    const now = this.#o.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.#byId.values()) {
      if (!entry.waiting) continue;
      if (due !== undefined && entry.deadline <= now) due.push(entry);
      else if (entry.deadline < next) next = entry.deadline;
    }
    return next;
  }

  #forget(entry: DialogEntry): void {
    settle(entry);
    this.#byId.delete(entry.id);
    if (this.#byKey?.get(entry.key) === entry) this.#byKey.delete(entry.key);
  }
}
