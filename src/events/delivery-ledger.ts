/**
 * Exactly-once bookkeeping of messages per bot, across queues, replays and restarts.
 *
 * The cursor is a low-water mark: every message with an id ≤ cursor that reached the bot has
 * finished its handlers. Messages above the cursor that finished out of order (conversations run
 * in parallel) are kept as marks, dropped once the cursor passes them; the store holds them as
 * one key, `finished`, id runs in a string such as "3-5,9-10,20" (they come in runs). A message is
 * marked only after its handlers finish, so a crash mid-handler makes it run again rather than
 * be lost: at-least-once for that one message, exactly-once for every other.
 *
 * `finish` only updates memory; `save` writes what changed since the last save (at most the
 * cursor and the ranges), so a whole wave of completions costs two store writes rather than
 * several per message: a key per mark made the writes most of the runtime's CPU. The runtime saves, then commits the store, before a conversation's
 * next message starts (bench: dispatch).
 */
import type { StateStore } from "../state/state-store.ts";

const CURSOR = "cursor";
const FINISHED = "finished";
/** Marks of earlier versions, one key per message; read at open, deleted at the first save. */
const LEGACY_MARK = "handled:";

export class DeliveryLedger {
  readonly #store: StateStore;
  #cursor: number | undefined;
  /** Finished ids above the cursor, in memory, and the lowest of them (+∞ when none). */
  #marks = new Set<number>();
  #lowestMark = Number.POSITIVE_INFINITY;
  /** What the store holds: the cursor as of the last save, and whether the marks changed since. */
  #savedCursor: number | undefined;
  #marksChanged = false;
  #legacyKeys: string[] = [];
  #inFlight = new Set<number>();
  #maxBegun = -1;
  /**
   * True while every in-flight id was begun in increasing order (the usual case: a queue and a
   * replay both deliver oldest first), so the set's first element is the lowest. Scanning the
   * whole set on every finish cost O(in flight) per message (3% of dispatch CPU in the bench).
   */
  #ordered = true;

  private constructor(store: StateStore) {
    this.#store = store;
  }

  /** Load the bot's cursor and marks from its runtime namespace. */
  static async open(store: StateStore): Promise<DeliveryLedger> {
    const ledger = new DeliveryLedger(store);
    const cursor = await store.get(CURSOR);
    ledger.#cursor = typeof cursor === "number" ? cursor : undefined;
    for (const [from, to] of rangesIn(await store.get(FINISHED))) {
      for (let id = from; id <= to; id++) ledger.#marks.add(id);
    }
    for (const { key } of await store.list(LEGACY_MARK)) {
      const id = Number(key.slice(LEGACY_MARK.length));
      if (Number.isSafeInteger(id)) ledger.#marks.add(id);
      ledger.#legacyKeys.push(key);
    }
    ledger.#marksChanged = ledger.#legacyKeys.length > 0;
    for (const mark of ledger.#marks) if (mark < ledger.#lowestMark) ledger.#lowestMark = mark;
    ledger.#savedCursor = ledger.#cursor;
    ledger.#maxBegun = ledger.#cursor ?? -1;
    return ledger;
  }

  /** The last message id up to which everything is handled; undefined before the first start. */
  get cursor(): number | undefined {
    return this.#cursor;
  }

  get inFlight(): number {
    return this.#inFlight.size;
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
    return (
      (this.#cursor !== undefined && id <= this.#cursor) || this.#inFlight.has(id) || this.#marks.has(id)
    );
  }

  /** The message is about to be handled. */
  begin(id: number): void {
    if (this.#inFlight.size === 0) this.#ordered = true;
    else if (id < this.#maxBegun) this.#ordered = false;
    this.#inFlight.add(id);
    if (id > this.#maxBegun) this.#maxBegun = id;
  }

  /** The message's handlers finished (successfully or not): mark it and advance the cursor, in memory. */
  finish(id: number): void {
    this.#inFlight.delete(id);
    const watermark = this.#watermark();
    if (this.#cursor === undefined || watermark > this.#cursor) {
      this.#cursor = watermark;
      // Scan only when the cursor passed the lowest mark: scanning on every advance was
      // quadratic in the marks a wave of held conversations leaves behind.
      if (this.#marks.size > 0 && watermark >= this.#lowestMark) {
        let lowest = Number.POSITIVE_INFINITY;
        for (const mark of this.#marks) {
          if (mark <= watermark) this.#marks.delete(mark);
          else if (mark < lowest) lowest = mark;
        }
        this.#lowestMark = lowest;
        this.#marksChanged = true;
      }
    }
    if (id > watermark) {
      this.#marks.add(id);
      if (id < this.#lowestMark) this.#lowestMark = id;
      this.#marksChanged = true;
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
      writes.push(
        this.#marks.size === 0
          ? this.#store.delete(FINISHED)
          : this.#store.set(FINISHED, rangesOf(this.#marks)),
      );
      for (const key of this.#legacyKeys.splice(0)) writes.push(this.#store.delete(key));
    }
    await Promise.all(writes);
  }

  #watermark(): number {
    if (this.#inFlight.size === 0) return this.#maxBegun;
    if (this.#ordered) return (this.#inFlight.values().next().value as number) - 1;
    let lowest = Number.POSITIVE_INFINITY;
    for (const id of this.#inFlight) if (id < lowest) lowest = id;
    return lowest === Number.POSITIVE_INFINITY ? this.#maxBegun : lowest - 1;
  }
}

/**
 * Sorted ids as runs in one string: 3,4,5,9,10,20 → "3-5,9-10,20". A string rather than an
 * array of pairs: the store validates and serializes an array element by element, one small
 * array per run, at every save of a wave.
 */
function rangesOf(ids: Set<number>): string {
  const sorted = [...ids];
  // Usually already in order (marks are added as messages finish, oldest first).
  for (let i = 1; i < sorted.length; i++) {
    if ((sorted[i] as number) < (sorted[i - 1] as number)) {
      sorted.sort((a, b) => a - b);
      break;
    }
  }
  let text = "";
  let from = sorted[0] as number;
  let to = from;
  for (let i = 1; i <= sorted.length; i++) {
    const id = sorted[i];
    if (id === to + 1) to = id;
    else {
      text += `${text === "" ? "" : ","}${from === to ? from : `${from}-${to}`}`;
      if (id !== undefined) from = to = id;
    }
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
