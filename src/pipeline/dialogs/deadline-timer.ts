/**
 * One timer for every waiting dialog's deadline, set for the earliest: a timer per dialog costs
 * about 600 bytes each (Node keeps a list per distinct delay), 6 MB for 10,000 waiting dialogs.
 * When it fires, one pass over the entries takes every due dialog and finds the next deadline.
 */
import type { Clock, TimerHandle } from "../../time/clock.ts";
import type { DialogEntry } from "./dialog-entry.ts";

export class DeadlineTimer {
  readonly #clock: Clock;
  readonly #entries: () => Iterable<DialogEntry>;
  #onDue: ((entry: DialogEntry) => void) | undefined;
  #timer: TimerHandle | undefined;
  /** When the timer fires (epoch ms); Infinity while none is set. */
  #at = Number.POSITIVE_INFINITY;

  constructor(clock: Clock, entries: () => Iterable<DialogEntry>) {
    this.#clock = clock;
    this.#entries = entries;
  }

  /** Report each waiting entry whose deadline passes, from now on (one already past at once). */
  arm(onDue: (entry: DialogEntry) => void): void {
    this.#onDue = onDue;
    this.#clear();
    const next = this.#sweep(undefined);
    if (next !== Number.POSITIVE_INFINITY) this.#set(next);
  }

  /** Report nothing more until armed again. */
  stop(): void {
    this.#clear();
    this.#onDue = undefined;
  }

  /**
   * `entry` waits past its deadline, which this timer reports (at once, or has): its timeout is to
   * run, so it waits there no longer than that run.
   */
  overdue(entry: DialogEntry): boolean {
    const { deadline } = entry.head;
    return this.#onDue !== undefined && entry.waiting && deadline > 0 && deadline <= this.#clock.now();
  }

  /** `entry` waits (again): fire by its deadline. An answered or forgotten one needs no call. */
  waits(entry: DialogEntry): void {
    if (this.#onDue !== undefined && entry.head.deadline < this.#at) this.#set(entry.head.deadline);
  }

  #set(at: number): void {
    const clock = this.#clock;
    this.#clear();
    this.#at = at;
    this.#timer = clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.#at = Number.POSITIVE_INFINITY;
        const due: DialogEntry[] = [];
        const next = this.#sweep(due);
        if (next !== Number.POSITIVE_INFINITY) this.#set(next);
        // Several are due at once after a pause (or a slow turn): the earliest first.
        due.sort((x, y) => x.head.deadline - y.head.deadline);
        for (const entry of due) {
          entry.due = true;
          this.#onDue?.(entry);
        }
      },
      Math.max(0, at - clock.now()),
    );
  }

  #clear(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#at = Number.POSITIVE_INFINITY;
  }

  /**
   * The earliest deadline of the waiting entries (Infinity: none); with `due`, the entries whose
   * deadline passed are put there instead.
   */
  #sweep(due: DialogEntry[] | undefined): number {
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.#entries()) {
      if (!entry.waiting || entry.due) continue;
      const deadline = entry.head.deadline;
      if (due !== undefined && deadline <= now) due.push(entry);
      else if (deadline < next) next = deadline;
    }
    return next;
  }
}
