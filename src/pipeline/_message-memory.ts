/**
 * The conversation key of each of the last `capacity` messages, by message id, for
 * {@link ConversationKeys}. The queue delivers messages oldest first, so the ids are kept as a
 * ring in increasing order, their keys beside them, and looked up by bisection: remembering a
 * message is two array writes, with no hash-table churn or garbage per event (a Map with a set
 * and a delete per message would have both, on the dispatch path). Ids that arrive out of order,
 * or that a move names after the ring forgot them, go in a small Map instead.
 */
export class MessageMemory {
  /** Ids in increasing order from `#start` (the oldest, once the ring is full) round to it. */
  readonly #ids: number[] = [];
  readonly #keys: (string | undefined)[] = [];
  #start = 0;
  readonly #others = new Map<number, string>();

  constructor(readonly capacity: number) {}

  get(id: number): string | undefined {
    if (this.#others.size > 0) {
      const key = this.#others.get(id);
      if (key !== undefined) return key;
    }
    const at = this.#find(id);
    return at < 0 ? undefined : this.#keys[at];
  }

  set(id: number, key: string): void {
    const n = this.#ids.length;
    if (n === 0 || id > (this.#ids[(this.#start + n - 1) % n] as number)) {
      this.#append(id, key);
      return;
    }
    const at = this.#find(id);
    if (at >= 0) {
      this.#keys[at] = key;
      return;
    }
    this.#others.set(id, key);
    if (this.#others.size > this.capacity) this.#others.delete(this.#others.keys().next().value as number);
  }

  delete(id: number): void {
    this.#others.delete(id);
    const at = this.#find(id);
    if (at >= 0) this.#keys[at] = undefined;
  }

  #append(id: number, key: string): void {
    if (this.#ids.length < this.capacity) {
      this.#ids.push(id);
      this.#keys.push(key);
      return;
    }
    this.#ids[this.#start] = id;
    this.#keys[this.#start] = key;
    this.#start = (this.#start + 1) % this.capacity;
  }

  /** The slot holding `id`, or -1. */
  #find(id: number): number {
    const n = this.#ids.length;
    let low = 0;
    let high = n - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const slot = (this.#start + mid) % n;
      const at = this.#ids[slot] as number;
      if (at === id) return slot;
      if (at < id) low = mid + 1;
      else high = mid - 1;
    }
    return -1;
  }
}
