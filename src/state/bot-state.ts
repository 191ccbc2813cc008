import { DedupSet } from "./dedup-set.ts";
import { KV } from "./kv.ts";
import { StateError } from "./state-error.ts";
import type { StateStore } from "./state-store.ts";

export interface BotStateOptions {
  /** How many recent message ids `seen()` remembers. @default 1000 */
  dedupSize?: number;
}

/**
 * Everything the runtime keeps for one bot, in the bot's namespace of the store:
 * `<bot>/kv/…` (the bot's own `ctx.state`), `<bot>/runtime/cursor`, `<bot>/dedup/<id>`.
 * Later records (reports, bookings, leases) go under {@link BotState.runtime}.
 *
 * @example
 * ```ts
 * const state = new BotState(store, "greeter");
 * if (await state.seen(msg.id)) return;
 * await handle(msg);
 * await state.advanceCursor(msg.id);
 * ```
 */
export class BotState {
  /** The bot's own key-value data (`ctx.state`). */
  readonly kv: KV;
  /** The runtime's records for this bot (cursor and later issues' records). */
  readonly runtime: StateStore;
  private readonly dedup: DedupSet;

  constructor(store: StateStore, botName: string, options: BotStateOptions = {}) {
    const ns = store.namespace(botName);
    this.kv = new KV(ns.namespace("kv"));
    this.runtime = ns.namespace("runtime");
    this.dedup = new DedupSet(ns.namespace("dedup"), options.dedupSize ?? 1000);
  }

  /** The last message id handled, or `undefined` before the first. */
  async cursor(): Promise<number | undefined> {
    const value = await this.runtime.get("cursor");
    return typeof value === "number" ? value : undefined;
  }

  /** Move the cursor to `id` unless it is already at or past it; resolves the cursor after. */
  async advanceCursor(id: number): Promise<number> {
    if (!Number.isSafeInteger(id) || id < 0) {
      throw new StateError(
        "STATE_INVALID_VALUE",
        `The cursor must be a message id (a non-negative integer), got ${String(id)}.`,
      );
    }
    const next = await this.runtime.update("cursor", (current) =>
      typeof current === "number" && current >= id ? current : id,
    );
    return next as number;
  }

  /** `true` if `id` was seen before (within the last `dedupSize` ids); otherwise records it. */
  seen(id: number | string): Promise<boolean> {
    return this.dedup.seen(id);
  }
}
