/**
 * The delivery ledger of a webhook-mode bot: the ids of the messages it handled, whatever order
 * their deliveries come in.
 *
 * {@link DeliveryLedger}'s cursor (every id up to it that reached the bot is handled) rests on ids
 * arriving in order, as from an event queue, with catch-up fetching what a restart missed. An
 * outgoing webhook breaks both: the server retries a delivery after a timeout or a connection
 * error by putting it back on its queue, behind deliveries queued meanwhile, so an id can arrive
 * after a higher one has finished; and most ids never arrive at all (messages that do not trigger
 * the bot), so nothing ever fills the gaps a cursor would wait on. There is no catch-up either,
 * so a cursor would serve nothing.
 *
 * This ledger keeps the ids of the last {@link KEEP} messages handled (the highest ids), and a
 * floor: the highest id it let go of. A delivery at or below the floor is dropped (it is older
 * than every id kept: {@link KEEP} newer messages were handled before it came); any other is
 * handled unless its id is kept or in flight. A message is recorded only after its handlers
 * finish, as in the queue's ledger. The floor itself was handled; a delivery below it may not
 * have been (a delivery retried very late), so its drop is logged ({@link BELOW_FLOOR_LINE}).
 *
 * Stored like DeliveryLedger, in the same keys: the floor as `cursor`, the ids as runs under
 * `finished.0` to `finished.15` (one per save, its own completions) and, once every slot is
 * taken, all of them under `finished`. A key is deleted once the floor passed its ids. So a bot
 * moved from a queue to webhook mode drops what its queue handled, and the other way round its
 * queue catches up from the floor and skips the ids kept.
 */

import type { Logger } from "../api/logger.ts";
import type { StateStore } from "../state/state-store.ts";
import { CURSOR, MARK_KEYS, type MessageLedger, rangesIn } from "./delivery-ledger.ts";
import type { Dialogs } from "./dialogs/dialogs.ts";
import type { LedgerCommits } from "./ledger-commits.ts";

/** How many handled ids are kept above the floor (in memory, and in the store: about 10 kB). */
export const KEEP = 1000;

/** The log line of a delivery dropped below the floor (see {@link WebhookLedger.isDuplicate}). */
export const BELOW_FLOOR_LINE =
  "a delivery older than the last 1000 messages handled was dropped: it may never have been handled";

export class WebhookLedger implements MessageLedger {
  readonly #store: StateStore;
  readonly #log: Logger | undefined;
  /** The highest id let go of: every delivery at or below it is dropped. */
  #floor: number | undefined;
  /** The ids handled above the floor, increasing; at most KEEP. */
  #kept: number[] = [];
  /** Begun, not finished. */
  readonly #inFlight = new Set<number>();
  /** The floor as of the last save. */
  #savedFloor: number | undefined;
  /** Ids handled since the last save. */
  #newMarks: number[] = [];
  /** The highest id under each of MARK_KEYS in the store, or undefined where the key is absent. */
  readonly #stored: (number | undefined)[] = MARK_KEYS.map(() => undefined);

  private constructor(store: StateStore, log: Logger | undefined) {
    this.#store = store;
    this.#log = log;
  }

  /** Load the bot's floor and handled ids from its runtime namespace; `log` is told of drops below the floor. */
  static async open(store: StateStore, log?: Logger): Promise<WebhookLedger> {
    const ledger = new WebhookLedger(store, log);
    const [cursor, ...marks] = await store.getMany([CURSOR, ...MARK_KEYS]);
    let floor = typeof cursor === "number" ? cursor : undefined;
    const ranges: [number, number][] = [];
    for (const [i, value] of marks.entries()) {
      let highest: number | undefined;
      for (const [from, to] of rangesIn(value)) {
        ranges.push([from, to]);
        if (highest === undefined || to > highest) highest = to;
      }
      ledger.#stored[i] = highest;
    }
    // The highest KEEP ids above the floor; the next one down, if any, raises the floor.
    const kept: number[] = [];
    ranges.sort((a, b) => b[1] - a[1]);
    let below = Number.POSITIVE_INFINITY; // ids from here up are taken
    for (const [from, to] of ranges) {
      for (let id = Math.min(to, below - 1); id >= from && (floor === undefined || id > floor); id--) {
        if (kept.length === KEEP) {
          floor = id;
          break;
        }
        kept.push(id);
        below = id;
      }
      if (kept.length === KEEP && floor !== undefined && floor >= from) break;
    }
    ledger.#kept = kept.reverse();
    ledger.#floor = floor;
    ledger.#savedFloor = typeof cursor === "number" ? cursor : undefined;
    return ledger;
  }

  /** The floor: no delivery at or below it is handled; undefined before the first let go of. */
  get cursor(): number | undefined {
    return this.#floor;
  }

  /** A starting point, where none was set (what a queue's first start does; webhook mode never calls it). */
  async baseline(id: number): Promise<void> {
    if (this.#floor !== undefined) return;
    this.#floor = id;
    this.#savedFloor = id;
    await this.#store.set(CURSOR, id);
  }

  /**
   * True if the message was handled or is being handled, or is at or below the floor. One below
   * the floor is not known to be handled: its drop is logged (the dispatcher asks once a delivery).
   */
  isDuplicate(id: number): boolean {
    const floor = this.#floor;
    if (floor !== undefined && id <= floor) {
      if (id < floor) this.#log?.warn({ messageId: id, floor }, BELOW_FLOOR_LINE);
      return true;
    }
    return this.#inFlight.has(id) || this.#indexOf(id) >= 0;
  }

  /** True if the message's handlers finished (its id kept, or at or below the floor) and none runs now. */
  handled(id: number): boolean {
    if (this.#inFlight.has(id)) return false;
    return (this.#floor !== undefined && id <= this.#floor) || this.#indexOf(id) >= 0;
  }

  /** True if the message is below the floor: a duplicate not known to be handled. */
  isLate(id: number): boolean {
    return this.#floor !== undefined && id < this.#floor;
  }

  /** The message is about to be handled. */
  begin(id: number): void {
    this.#inFlight.add(id);
  }

  /** The message's run was not handled (kept again, or left to a later start): no longer in flight, not kept. */
  release(id: number): void {
    this.#inFlight.delete(id);
  }

  /** The message's handlers finished (successfully or not): keep its id, in memory. */
  finish(id: number): void {
    this.#inFlight.delete(id);
    if (this.#floor !== undefined && id <= this.#floor) return;
    const kept = this.#kept;
    const at = this.#insertionPoint(id);
    if (kept[at] === id) return;
    if (at === kept.length) kept.push(id);
    else kept.splice(at, 0, id); // out of order
    this.#newMarks.push(id);
    if (kept.length > KEEP) this.#floor = kept.shift();
  }

  /**
   * Write what changed since the last save: the ids handled since (above the floor) under a free
   * slot, or all kept ids under `finished` when every slot is taken; then the floor; then delete
   * the keys the floor passed. The store applies writes in the order made, so a crash between
   * them loses no id the floor does not cover.
   */
  async save(): Promise<void> {
    const writes: Promise<unknown>[] = [];
    const floor = this.#floor ?? Number.NEGATIVE_INFINITY;
    const marks = this.#newMarks.filter((id) => id > floor).sort((a, b) => a - b);
    this.#newMarks = [];
    if (marks.length > 0) {
      const slot = this.#stored.indexOf(undefined, 1);
      if (slot >= 0) {
        writes.push(this.#store.set(MARK_KEYS[slot] as string, runs(marks)));
        this.#stored[slot] = marks[marks.length - 1];
      } else {
        writes.push(this.#store.set(MARK_KEYS[0] as string, runs(this.#kept)));
        this.#stored[0] = this.#kept[this.#kept.length - 1];
        for (let i = 1; i < MARK_KEYS.length; i++) {
          if (this.#stored[i] === undefined) continue;
          this.#stored[i] = undefined;
          writes.push(this.#store.delete(MARK_KEYS[i] as string));
        }
      }
    }
    if (this.#floor !== undefined && this.#floor !== this.#savedFloor) {
      this.#savedFloor = this.#floor;
      writes.push(this.#store.set(CURSOR, this.#floor));
    }
    for (const [i, highest] of this.#stored.entries()) {
      if (highest === undefined || highest > floor) continue;
      this.#stored[i] = undefined;
      writes.push(this.#store.delete(MARK_KEYS[i] as string));
    }
    await Promise.all(writes);
  }

  #indexOf(id: number): number {
    const at = this.#insertionPoint(id);
    return this.#kept[at] === id ? at : -1;
  }

  /** Where `id` goes in the kept ids to keep them sorted. */
  #insertionPoint(id: number): number {
    const kept = this.#kept;
    // Deliveries come mostly in order: past the newest, no bisection.
    if (kept.length === 0 || id > (kept[kept.length - 1] as number)) return kept.length;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((kept[mid] as number) < id) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * At a start, with a webhook-mode ledger: the answers the dialogs' logs hold (read by `dialogs`
 * just now) are marked handled where they are not. An answer's append to its dialog's log is its
 * message's commit, and its mark in the ledger is written after it, so a crash between the two
 * leaves the mark unwritten. A queue's catch-up brings that message again, and its dialog knows it
 * as a copy (dialog-runs.ts); in webhook mode only the server's repeat of the delivery brings it,
 * maybe once the dialog is over, when nothing would know it but the ledger. Resolves true once the
 * marks are committed.
 */
export async function markAnswersHandled(
  dialogs: Dialogs,
  commits: LedgerCommits | undefined,
): Promise<true> {
  const ledger = commits?.ledger;
  if (!(ledger instanceof WebhookLedger)) return true;
  const committed: Promise<void>[] = [];
  for (const entry of dialogs.entries())
    for (const id of entry.head.answered) {
      if (ledger.handled(id)) continue;
      const commit = commits?.finish(id);
      if (commit !== undefined) committed.push(commit);
    }
  await Promise.all(committed);
  return true;
}

/** Sorted ids as runs: "3-5,9-10,20". */
function runs(ids: readonly number[]): string {
  let text = "";
  for (let i = 0; i < ids.length; ) {
    const first = ids[i++] as number;
    let last = first;
    while (ids[i] === last + 1) {
      last++;
      i++;
    }
    if (text !== "") text += ",";
    text += first === last ? `${first}` : `${first}-${last}`;
  }
  return text;
}
