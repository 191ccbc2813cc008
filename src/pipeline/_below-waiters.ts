/**
 * The promises behind ConversationQueue.onBelow(): each resolves once the queue reports a count
 * below its limit. Checked after every finished task, so the common case (nobody waiting) is a
 * single length test.
 */

interface Waiter {
  limit: number;
  resolve: () => void;
}

export class BelowWaiters {
  private waiters: Waiter[] = [];

  /** Resolves at the first {@link settle} with a count below `limit`; rejects if `signal` aborts first. */
  wait(limit: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        limit,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Resolve every waiter whose limit is above `count`. */
  settle(count: number): void {
    if (this.waiters.length === 0 || !this.waiters.some((w) => count < w.limit)) return;
    const due = this.waiters.filter((w) => count < w.limit);
    this.waiters = this.waiters.filter((w) => count >= w.limit);
    for (const w of due) w.resolve();
  }
}
