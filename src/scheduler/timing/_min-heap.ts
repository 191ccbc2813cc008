/**
 * A binary min-heap: O(log n) push and pop, O(1) peek. Internal to the job timer, which keeps
 * one entry per job's next fire time so a tick costs O(log n), not a scan of every job.
 */
export class MinHeap<T> {
  readonly #items: T[] = [];
  readonly #less: (a: T, b: T) => boolean;

  constructor(less: (a: T, b: T) => boolean) {
    this.#less = less;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.#siftDown(0);
    }
    return top;
  }

  /** Keep only the items `keep` accepts (used to drop stale entries in bulk), then re-heapify. */
  retain(keep: (item: T) => boolean): void {
    const kept = this.#items.filter(keep);
    this.#items.length = 0;
    for (const item of kept) this.#items.push(item);
    for (let i = (kept.length >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  clear(): void {
    this.#items.length = 0;
  }

  #siftDown(start: number): void {
    const items = this.#items;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < items.length && this.#less(items[left]!, items[smallest]!)) smallest = left;
      if (right < items.length && this.#less(items[right]!, items[smallest]!)) smallest = right;
      if (smallest === i) return;
      [items[i], items[smallest]] = [items[smallest]!, items[i]!];
      i = smallest;
    }
  }
}
