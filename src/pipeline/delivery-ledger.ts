/**
 * Exactly-once bookkeeping of messages per bot, across queues, replays and restarts (a bot fed by
 * outgoing-webhook deliveries, which come in any order, has its own: webhook-ledger.ts).
 *
 * The cursor is a low-water mark: every message with an id ≤ cursor that reached the bot has
 * finished its handlers. Messages above it that finished out of order (conversations run in
 * parallel) are kept as marks until the cursor passes them, stored as id runs ("3-5,9-10,20").
 * A message is marked only after its handlers finish, so a crash mid-handler runs it again
 * rather than losing it.
 *
 * `finish` only updates memory; `save` writes what changed: the cursor, and the marks made since
 * the last save as runs of their own, in the first free of {@link SLOTS} keys (`finished.0`, …),
 * so a save costs what its own completions cost, not every mark above the cursor again (a
 * burst's saves each came with thousands). A slot whose marks the cursor passed is deleted; when
 * every slot is taken, the marks are written as one key, `finished`, and the slots deleted.
 *
 * In memory, this run's messages above the cursor are one sorted array (the window): begun ids,
 * negated once finished. Messages arrive oldest first, so beginning is a push and finishing a
 * bisection, with no hash table written per message. Marks read from the store at start stay in
 * a Set: the ids between them may never have been handled, so they must not move the cursor.
 */
import type { StateStore } from "../state/state-store.ts";

export const CURSOR = "cursor";
/** Logged (warn) when a start takes this process's ledger again, the store having lost the bot's. */
export const LEDGER_CARRIED =
  "the state store lost the bot's delivery ledger: it goes on from where it was here, catching up what was sent meanwhile";
/** Every mark as of the last time the slots were full (and what earlier versions wrote). */
const FINISHED = "finished";
/** Keys of the marks saved since, one per save: `finished.0` to `finished.15`. */
const SLOTS = 16;
const SLOT_KEYS = Array.from({ length: SLOTS }, (_, i) => `${FINISHED}.${i}`);
/** Every key the marks are stored under, read in one call at open. */
export const MARK_KEYS: readonly string[] = [FINISHED, ...SLOT_KEYS];
/** Drop the window's finished head once it is this long and more than half the array. */
const COMPACT_AT = 1024;

/** The marks of a ledger that restored none (most bots): shared, only ever read or deleted from. */
const NO_MARKS: Set<number> = new Set();

/**
 * What the pipeline needs of a delivery ledger: {@link DeliveryLedger} for a queue (ids in order,
 * caught up from the cursor), WebhookLedger (webhook-ledger.ts) for outgoing-webhook deliveries.
 */
export interface MessageLedger {
  readonly cursor: number | undefined;
  baseline(id: number): Promise<void>;
  isDuplicate(id: number): boolean;
  /** Of a duplicate: dropped as older than every id kept, not known to be handled (WebhookLedger's floor). */
  isLate?(id: number): boolean;
  begin(id: number): void;
  finish(id: number): void;
  save(): Promise<void>;
}

export class DeliveryLedger implements MessageLedger {
  readonly #store: StateStore;
  #cursor: number | undefined;
  /** Begun ids above the cursor in increasing order from `#head`; a finished one is negated. */
  #window: number[] = [];
  #head = 0;
  #maxBegun = -1;
  /** Marks read from the store at open that the cursor has not passed yet, and the lowest. */
  #restored = NO_MARKS;
  #lowestRestored = Number.POSITIVE_INFINITY;
  /** The cursor as of the last save. */
  #savedCursor: number | undefined;
  /** Ids marked (finished behind an unfinished one) since the last save, in finishing order. */
  #newMarks: number[] = [];
  /** The highest id under each of MARK_KEYS in the store, or undefined where the key is absent. */
  #stored: (number | undefined)[] = MARK_KEYS.map(() => undefined);
  /** The last save begun, until it settles. */
  #saving: Promise<unknown> | undefined;

  private constructor(store: StateStore) {
    this.#store = store;
  }

  /** Load the bot's cursor and marks from its runtime namespace. */
  static async open(store: StateStore): Promise<DeliveryLedger> {
    const ledger = new DeliveryLedger(store);
    const [cursor, ...marks] = await store.getMany([CURSOR, ...MARK_KEYS]);
    ledger.#cursor = typeof cursor === "number" ? cursor : undefined;
    const above = ledger.#cursor ?? Number.NEGATIVE_INFINITY;
    const restored = new Set<number>();
    for (const [i, value] of marks.entries()) {
      if (value === undefined) continue;
      let highest = Number.NEGATIVE_INFINITY;
      for (const [from, to] of rangesIn(value)) {
        for (let id = Math.max(from, above + 1); id <= to; id++) restored.add(id);
        if (to > highest) highest = to;
      }
      ledger.#stored[i] = highest;
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

  /**
   * Go on from `from`, this process's ledger of the bot's last start, when the store lost this
   * one (read back without a cursor while `from` had one: a Redis restarted without persistence,
   * or flushed): its cursor and its marks above it are taken and written again, so that the
   * messages sent meanwhile are caught up rather than skipped. False when there is nothing to take.
   */
  async carry(from: DeliveryLedger): Promise<boolean> {
    if (this.#cursor !== undefined || from.#cursor === undefined) return false;
    const { text, highest } = from.#marksText();
    const marks = new Set<number>();
    for (const [first, last] of rangesIn(text)) for (let id = first; id <= last; id++) marks.add(id);
    if (marks.size > 0) {
      await this.#store.set(FINISHED, text);
      // The runs come in order: the first id is the lowest (no spread: a stuck run may leave many).
      [this.#restored, this.#lowestRestored, this.#stored[0]] = [
        marks,
        marks.values().next().value!,
        highest,
      ];
    }
    await this.baseline(from.#cursor);
    return true;
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
    if (at !== from) this.#newMarks.push(id); // finished behind an unfinished one
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

  /**
   * Write what changed since the last save: the marks made since (still above the cursor), then
   * the cursor, then delete the keys whose marks the cursor passed. The store applies writes in
   * the order made, so a crash between them loses no mark the cursor does not cover.
   *
   * A save that fails leaves the ledger as if it had not been tried (see {@link #unsave}), and a
   * save resolves only once every save before it landed: one begun while another's writes were
   * still in flight has nothing of theirs left to write, and must not say the store took them.
   */
  save(): Promise<void> {
    const cursor = this.#cursor ?? Number.NEGATIVE_INFINITY;
    const writes: Promise<unknown>[] = [];
    const taken = this.#newMarks.length === 0 ? undefined : this.#newMarks.sort(byValue);
    const marks = taken === undefined ? undefined : this.#takeNewMarks(taken, cursor);
    let deleted = 0;
    if (marks !== undefined) {
      const slot = this.#stored.indexOf(undefined, 1);
      if (slot < 0) deleted = this.#writeAllMarks(writes);
      else {
        writes.push(this.#store.set(MARK_KEYS[slot] as string, runsText(marks, 0)));
        this.#stored[slot] = -(marks[marks.length - 1] as number);
      }
    }
    if (this.#cursor !== undefined && this.#cursor !== this.#savedCursor) {
      this.#savedCursor = this.#cursor;
      writes.push(this.#store.set(CURSOR, this.#cursor));
    }
    for (const [i, highest] of this.#stored.entries()) {
      if (highest === undefined || highest > cursor) continue;
      this.#stored[i] = undefined;
      deleted |= 1 << i;
      writes.push(this.#store.delete(MARK_KEYS[i] as string));
    }
    const own = Promise.all(writes).then(undefined, (err: unknown) => {
      this.#unsave(marks === undefined ? undefined : taken, deleted, cursor);
      throw err;
    });
    const before = this.#saving;
    const saving = before === undefined ? own : Promise.allSettled([own, before]).then(firstFailure);
    this.#saving = saving;
    const settled = () => {
      if (this.#saving === saving) this.#saving = undefined;
    };
    return saving.then(settled, (err: unknown) => {
      settled();
      throw err;
    });
  }

  /**
   * A save's writes failed, some may have landed: its marks go back to be written again, and so
   * does the cursor. A slot written stays counted as stored (its marks were all handled, so it is
   * harmless if it landed) and is deleted once the cursor passes it, as are the slots whose
   * deletes failed (`deleted`: a bit per MARK_KEYS index), unless a later save took them meanwhile.
   */
  #unsave(taken: number[] | undefined, deleted: number, cursor: number): void {
    if (taken !== undefined) this.#newMarks = taken.concat(this.#newMarks);
    this.#savedCursor = undefined;
    for (let i = 0; i < MARK_KEYS.length; i++) {
      if ((deleted & (1 << i)) !== 0 && this.#stored[i] === undefined) this.#stored[i] = cursor;
    }
  }

  /** Of the marks made since the last save (`ids`, sorted), those above `cursor`, negated (as the window). */
  #takeNewMarks(ids: readonly number[], cursor: number): number[] | undefined {
    this.#newMarks = [];
    const marks: number[] = [];
    for (const id of ids) if (id > cursor) marks.push(-id);
    return marks.length === 0 ? undefined : marks;
  }

  /** Every slot is taken: all marks go under FINISHED, and the slots are deleted (returned as bits). */
  #writeAllMarks(writes: Promise<unknown>[]): number {
    const { text, highest } = this.#marksText();
    writes.push(this.#store.set(FINISHED, text));
    this.#stored[0] = highest;
    let deleted = 0;
    for (let i = 1; i < MARK_KEYS.length; i++) {
      if (this.#stored[i] === undefined) continue;
      this.#stored[i] = undefined;
      deleted |= 1 << i;
      writes.push(this.#store.delete(MARK_KEYS[i] as string));
    }
    return deleted;
  }

  /**
   * Every mark (finished ids above the cursor) as runs such as "3-5,9-10,20", and the highest.
   * The usual case (no restored marks) reads the window directly.
   */
  #marksText(): { text: string; highest: number } {
    const window = this.#window;
    let highest = Number.NEGATIVE_INFINITY;
    for (let i = window.length - 1; i >= this.#head; i--) {
      if ((window[i] as number) < 0) {
        highest = -(window[i] as number);
        break;
      }
    }
    if (this.#restored.size === 0) return { text: runsText(window, this.#head), highest };
    const ids = [...this.#restored];
    for (let i = this.#head; i < window.length; i++)
      if ((window[i] as number) < 0) ids.push(-(window[i] as number));
    ids.sort(byValue);
    const text = runsText(
      ids.map((id) => -id),
      0,
    );
    return { text, highest: Math.max(highest, ids[ids.length - 1] as number) };
  }

  #dropRestored(cursor: number): void {
    let lowest = Number.POSITIVE_INFINITY;
    for (const mark of this.#restored) {
      if (mark <= cursor) this.#restored.delete(mark);
      else if (mark < lowest) lowest = mark;
    }
    this.#lowestRestored = lowest;
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

const byValue = (a: number, b: number): number => a - b;

/** Settles once every save it waits on did; throws the first one's error. */
function firstFailure(results: PromiseSettledResult<unknown>[]): void {
  for (const result of results) if (result.status === "rejected") throw result.reason;
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
export function rangesIn(value: unknown): [number, number][] {
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
