/**
 * Exactly-once bookkeeping of messages per bot, across queues, replays and restarts.
 *
 * The cursor is a low-water mark: every message with an id ≤ cursor that reached the bot has
 * finished its handlers. Messages above it that finished out of order (conversations run in
 * parallel) are kept as marks until the cursor passes them, stored as one key, `finished`, of id
 * runs ("3-5,9-10,20"). A message is marked only after its handlers finish, so a crash
 * mid-handler runs it again rather than losing it.
 *
 * `finish` only updates memory; `save` writes what changed (at most the cursor and the runs), so
 * a wave of completions costs two store writes.
 *
 * In memory, this run's messages above the cursor are one sorted array (the window): begun ids,
 * negated once finished. Messages arrive oldest first, so beginning is a push and finishing a
 * bisection, with no hash table written per message. Marks read from the store at start stay in
 * a Set: the ids between them may never have been handled, so they must not move the cursor.
 */
import type { Logger } from "../api/logger.ts";
import type { StateStore } from "../state/state-store.ts";
import { nextTurn } from "../time/clock.ts";

const CURSOR = "cursor";
const FINISHED = "finished";
/** Marks of earlier versions, one key per message; read at open, deleted at the first save. */
/** Drop the window's finished head once it is this long and more than half the array. */
const COMPACT_AT = 1024;

/** The marks of a ledger that restored none (most bots): shared, only ever read or deleted from. */
const NO_MARKS: Set<number> = new Set();

export class DeliveryLedger {
  readonly #store: StateStore;
  #cursor: number | undefined;
  /** Begun ids above the cursor in increasing order from `#head`; a finished one is negated. */
  #window: number[] = [];
  #head = 0;
  #maxBegun = -1;
  /** Marks read from the store at open that the cursor has not passed yet, and the lowest. */
  #restored = NO_MARKS;
  #lowestRestored = Number.POSITIVE_INFINITY;
  /** What the store holds: the cursor as of the last save, and whether the marks changed since. */
  #savedCursor: number | undefined;
  #marksChanged = false;

  private constructor(store: StateStore) {
    this.#store = store;
  }

  /** Load the bot's cursor and marks from its runtime namespace. */
  static async open(store: StateStore): Promise<DeliveryLedger> {
    const ledger = new DeliveryLedger(store);
    const cursor = await store.get(CURSOR);
    ledger.#cursor = typeof cursor === "number" ? cursor : undefined;
    const restored = new Set<number>();
    for (const [from, to] of rangesIn(await store.get(FINISHED))) {
      for (let id = from; id <= to; id++) restored.add(id);
    }
    if (restored.size > 0) ledger.#restored = restored;
    for (const mark of restored) if (mark < ledger.#lowestRestored) ledger.#lowestRestored = mark;
    ledger.#savedCursor = ledger.#cursor;
    ledger.#maxBegun = ledger.#cursor ?? -1;
    return ledger;
  }

  /** The last message id up to which everything is handled; undefined before the first start. */
  get cursor(): number | undefined {
    return this.#cursor;
  }

  /** Set the starting point on a first start (no replay before it). */
  async baseline(id: number): Promise<void> {
    if (this.#cursor !== undefined) return;
    this.#cursor = id;
    this.#savedCursor = id;
    this.#maxBegun = Math.max(this.#maxBegun, id);
    await this.#store.set(CURSOR, id);
  }

  /** True if the message was handled, or is being handled, already. */
  isDuplicate(id: number): boolean {
    if (this.#cursor !== undefined && id <= this.#cursor) return true;
    // Past the window's newest id (the usual case: ids come in order) no bisection is needed.
    const window = this.#window;
    const newer = window.length === this.#head || id > Math.abs(window[window.length - 1] as number);
    if (!newer && this.#find(id) >= 0) return true;
    return this.#restored.size > 0 && this.#restored.has(id);
  }

  /** The message is about to be handled. */
  begin(id: number): void {
    const window = this.#window;
    const last = window.length > this.#head ? Math.abs(window[window.length - 1] as number) : -1;
    if (id > last) window.push(id);
    else window.splice(this.#insertionPoint(id), 0, id); // out of order: rare
    if (id > this.#maxBegun) this.#maxBegun = id;
  }

  /** The message's handlers finished (successfully or not): mark it and advance the cursor, in memory. */
  finish(id: number): void {
    const window = this.#window;
    let at = this.#find(id);
    if (at < 0) {
      // Never begun: keep it as finished all the same.
      at = this.#insertionPoint(id);
      window.splice(at, 0, -id);
    } else if ((window[at] as number) > 0) window[at] = -id;
    else return;
    const from = this.#head;
    let head = from;
    while (head < window.length && (window[head] as number) < 0) head++;
    this.#head = head;
    // A new mark (finished behind an unfinished one), or marks the head moved past.
    if (at !== from || head - from > 1) this.#marksChanged = true;
    const watermark = head < window.length ? (window[head] as number) - 1 : this.#maxBegun;
    if (this.#cursor === undefined || watermark > this.#cursor) {
      this.#cursor = watermark;
      if (this.#restored.size > 0 && watermark >= this.#lowestRestored) this.#dropRestored(watermark);
    }
    if (head >= COMPACT_AT && head * 2 > window.length) {
      window.splice(0, head);
      this.#head = 0;
    }
  }

  /** Write the cursor and the marks, if they changed since the last save, to the store. */
  async save(): Promise<void> {
    const writes: Promise<unknown>[] = [];
    const cursor = this.#cursor;
    if (cursor !== undefined && cursor !== this.#savedCursor) {
      this.#savedCursor = cursor;
      writes.push(this.#store.set(CURSOR, cursor));
    }
    if (this.#marksChanged) {
      this.#marksChanged = false;
      const runs = this.#marksText();
      writes.push(runs === "" ? this.#store.delete(FINISHED) : this.#store.set(FINISHED, runs));
    }
    await Promise.all(writes);
  }

  /**
   * The marks (finished ids above the cursor) as runs such as "3-5,9-10,20". Written at every
   * commit: a burst of async handlers commits once per round of its conversations, each time
   * with thousands of marks, so the usual case (no restored marks) reads the window directly.
   */
  #marksText(): string {
    if (this.#restored.size === 0) return runsText(this.#window, this.#head);
    const ids = [...this.#restored];
    const window = this.#window;
    for (let i = this.#head; i < window.length; i++)
      if ((window[i] as number) < 0) ids.push(-(window[i] as number));
    ids.sort((a, b) => a - b);
    return runsText(
      ids.map((id) => -id),
      0,
    );
  }

  #dropRestored(cursor: number): void {
    let lowest = Number.POSITIVE_INFINITY;
    for (const mark of this.#restored) {
      if (mark <= cursor) this.#restored.delete(mark);
      else if (mark < lowest) lowest = mark;
    }
    this.#lowestRestored = lowest;
    this.#marksChanged = true;
  }

  /** The window slot of `id` (begun or finished), or -1. */
  #find(id: number): number {
    const window = this.#window;
    const at = this.#insertionPoint(id);
    return at < window.length && Math.abs(window[at] as number) === id ? at : -1;
  }

  /** Where `id` goes in the window to keep it sorted. */
  #insertionPoint(id: number): number {
    const window = this.#window;
    let low = this.#head;
    let high = window.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (Math.abs(window[mid] as number) < id) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** The negative (finished) entries of a sorted window from `from` on, as runs: "3-5,9-10,20". */
function runsText(window: readonly number[], from: number): string {
  let text = "";
  for (let i = from; i < window.length; ) {
    const first = -(window[i++] as number);
    if (first < 0) continue; // begun, not finished
    let last = first;
    while (window[i] === -(last + 1)) {
      last++;
      i++;
    }
    if (text !== "") text += ",";
    text += first === last ? `${first}` : `${first}-${last}`;
  }
  return text;
}

/** The runs stored under `finished`, ignoring anything malformed. */
function rangesIn(value: unknown): [number, number][] {
  if (typeof value !== "string" || value === "") return [];
  const ranges: [number, number][] = [];
  for (const run of value.split(",")) {
    const [from, to = from] = run.split("-").map(Number);
    if (Number.isSafeInteger(from) && Number.isSafeInteger(to) && (from as number) <= (to as number)) {
      ranges.push([from as number, to as number]);
    }
  }
  return ranges;
}

/**
 * Committing the ledger: every handled message is recorded durably before its conversation's
 * next message can do anything observable, so a crash (kill -9, a lost lease) never runs a
 * finished handler again. One commit covers every completion of the same turn of the event loop.
 */
export interface LedgerCommitOptions {
  log: Logger;
  /** Make the store's writes survive a crash of this process (the daemon's `commit`, else `flush`). */
  commit(): Promise<void>;
  /**
   * The store's synchronous commit, where it has one (a solo daemon's FileStore): the writes it
   * makes are durable when it returns true.
   */
  syncCommit: { ready(): boolean; commit(): boolean } | undefined;
}

/** The completions of this turn are committed synchronously at its end (see {@link LedgerCommits.finish}). */
const IN_TURN = Symbol("in-turn commit");

export class LedgerCommits {
  /** The ledger completions go to (a bot started again opens a new one: cluster failover). */
  readonly ledger: DeliveryLedger;
  readonly #o: LedgerCommitOptions;
  /**
   * The commit shared by every completion since the last one: a promise the conversations'
   * next messages wait for, or IN_TURN for a synchronous commit in a microtask.
   */
  #round: Promise<void> | typeof IN_TURN | undefined;
  /** A commit ran in a microtask of this turn of the event loop; cleared after the turn. */
  #committedInTurn = false;

  constructor(ledger: DeliveryLedger, options: LedgerCommitOptions) {
    this.ledger = ledger;
    this.#o = options;
  }

  /**
   * Record a completion; the commit must land before the conversation moves on, or a crash runs
   * a finished handler again (test/e2e/crash-restart.test.ts).
   *
   * The turn's first completions are committed synchronously in a microtask queued by the first
   * of them: the next message starts at once, but only its synchronous part runs before the
   * commit (what it awaits resumes later, and no I/O is processed until the turn ends). Returns
   * undefined then. Every later completion of the turn (handlers that return promises settle
   * one after another in microtasks), or every completion when the store cannot commit
   * synchronously (a network store, a FileStore compacting), waits for one commit after the
   * turn (`nextTurn`): the returned promise, which the conversation's next message waits for.
   * So a burst costs a commit per round of its conversations, not one per concurrency slot.
   */
  finish(id: number): Promise<void> | undefined {
    this.ledger.finish(id);
    const round = this.#round;
    if (round !== undefined) return round === IN_TURN ? undefined : round;
    if (!this.#committedInTurn && this.#o.syncCommit?.ready()) {
      this.#round = IN_TURN;
      queueMicrotask(this.#commitInTurn);
      return undefined;
    }
    const hold = nextTurn().then(() => {
      this.#round = undefined;
      return this.#o.syncCommit?.ready() ? this.#commitInTurn() : this.#save();
    });
    this.#round = hold;
    return hold;
  }

  readonly #commitInTurn = (): void => {
    this.#round = undefined;
    if (!this.#committedInTurn) {
      this.#committedInTurn = true;
      void nextTurn().then(this.#turnEnded);
    }
    // The store applies writes at the call (what syncCommit requires): save() has written its
    // keys once it returns, and its promise only reports.
    this.ledger.save().catch((err: unknown) => this.#failed(err));
    try {
      // ready() said it would be synchronous; if not, commit the usual way.
      if (!this.#o.syncCommit?.commit()) void this.#save();
    } catch (err) {
      this.#failed(err);
    }
  };

  readonly #turnEnded = (): void => {
    this.#committedInTurn = false;
  };

  async #save(): Promise<void> {
    try {
      await this.ledger.save();
      await this.#o.commit();
    } catch (err) {
      this.#failed(err);
    }
  }

  #failed(err: unknown): void {
    this.#o.log.error({ err }, "could not record handled messages in the state store; the next save retries");
  }
}
