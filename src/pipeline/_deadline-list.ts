/**
 * Items that each expire `timeoutMs` after they were added, watched with ONE clock timer.
 *
 * Every item gets the same timeout, so items expire in the order they were added. They are kept
 * in that order in a doubly linked list whose links live on the items themselves (add and remove
 * are O(1) and allocate nothing), so the head is always the next to expire. The timer is armed for
 * the head when the list stops being empty and cleared when it becomes empty. When the head is
 * removed early the timer is left alone: it then fires once with nothing due and re-arms for the
 * new head. Re-arming on every removal would cost a timer per item, which is what this replaces.
 */
import type { Clock, TimerHandle } from "../time/clock.ts";

/** The fields an item carries to be listed; only {@link DeadlineList} writes them. */
export interface DeadlineNode<T> {
  /** When the item expires, in the clock's milliseconds. */
  deadline: number;
  prevDue: T | undefined;
  nextDue: T | undefined;
}

export class DeadlineList<T extends DeadlineNode<T>> {
  private head: T | undefined = undefined;
  private tail: T | undefined = undefined;
  private timer: TimerHandle | undefined = undefined;

  /** `onExpired` gets each item once its deadline passed; the item is already removed then. */
  constructor(
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    private readonly onExpired: (item: T) => void,
  ) {}

  /** List `item` with a deadline `timeoutMs` from now. It must not be listed already. */
  add(item: T): void {
    item.deadline = this.clock.now() + this.timeoutMs;
    item.prevDue = this.tail;
    item.nextDue = undefined;
    if (this.tail === undefined) {
      this.head = item;
      if (this.timer === undefined) this.timer = this.clock.setTimeout(this.fire, this.timeoutMs);
    } else this.tail.nextDue = item;
    this.tail = item;
  }

  /** Unlist `item`; does nothing if it is not listed. */
  remove(item: T): void {
    const prev = item.prevDue;
    const next = item.nextDue;
    if (prev === undefined && this.head !== item) return;
    if (prev === undefined) this.head = next;
    else prev.nextDue = next;
    if (next === undefined) this.tail = prev;
    else next.prevDue = prev;
    item.prevDue = undefined;
    item.nextDue = undefined;
    if (this.head === undefined && this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** The listed items, oldest first (a copy: callbacks may change the list meanwhile). */
  items(): T[] {
    const all: T[] = [];
    for (let item = this.head; item !== undefined; item = item.nextDue) all.push(item);
    return all;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    const now = this.clock.now();
    for (let item = this.head; item !== undefined && item.deadline <= now; item = this.head) {
      this.remove(item);
      this.onExpired(item); // may add items: one added to an empty list arms the timer itself
    }
    if (this.head !== undefined && this.timer === undefined)
      this.timer = this.clock.setTimeout(this.fire, Math.max(0, this.head.deadline - now));
  };
}
