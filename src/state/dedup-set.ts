import { StateError } from "./state-error.ts";
import type { StateStore } from "./state-store.ts";

/**
 * A bounded, persisted set of recently handled ids: `seen(id)` claims an id and says whether it
 * had been claimed before. Keeps the last `capacity` ids claimed; older ones are forgotten.
 *
 * Each id is one key (value: a claim sequence number) claimed with `setIfAbsent`, so a claim is
 * exactly-once even with concurrent callers, and each claim journals one small record instead of
 * rewriting a whole list. The claim order is kept in memory, loaded from the store on first use.
 *
 * @example
 * ```ts
 * if (await dedup.seen(message.id)) return; // delivered twice (e.g. replay after a restart)
 * ```
 */
export class DedupSet {
  private order: string[] | undefined;
  private nextSeq = 0;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly store: StateStore,
    readonly capacity: number,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new StateError(
        "STATE_INVALID_VALUE",
        `Dedup capacity must be a positive integer, got ${capacity}.`,
      );
    }
  }

  /** `true` if `id` was claimed before (and is still remembered); otherwise claims it. */
  async seen(id: number | string): Promise<boolean> {
    if (!(typeof id === "string" ? id.length > 0 : Number.isSafeInteger(id))) {
      throw new StateError(
        "STATE_INVALID_VALUE",
        `Dedup ids must be integers or non-empty strings, got ${JSON.stringify(id)}.`,
      );
    }
    this.loading ??= this.load();
    await this.loading;
    const key = String(id);
    if (!(await this.store.setIfAbsent(key, this.nextSeq++))) return true;
    const order = this.order as string[];
    order.push(key);
    while (order.length > this.capacity) await this.store.delete(order.shift() as string);
    return false;
  }

  private async load(): Promise<void> {
    const entries = await this.store.list();
    entries.sort((a, b) => seqOf(a.value) - seqOf(b.value));
    this.order = entries.map((e) => e.key);
    this.nextSeq = entries.reduce((max, e) => Math.max(max, seqOf(e.value) + 1), 0);
    while (this.order.length > this.capacity) await this.store.delete(this.order.shift() as string);
  }
}

function seqOf(value: unknown): number {
  return typeof value === "number" ? value : 0;
}
