import { realClock } from "../time/clock.ts";
import { StoreView, Table } from "./_view.ts";
import type { StateBackend } from "./state-store.ts";

export interface MemoryStoreOptions {
  /** The clock used for expiry, in epoch milliseconds. @default the real clock's `now` */
  now?: () => number;
}

/**
 * A state store that lives only in memory: for tests and for bots that need no persistence.
 * Same semantics as {@link FileStore} (values copied, JSON-only, TTLs, namespaces), minus the disk.
 */
export class MemoryStore extends StoreView implements StateBackend {
  constructor(options: MemoryStoreOptions = {}) {
    super(new Table(options.now ?? realClock.now), "", { closed: false, description: "memory" });
  }

  async flush(): Promise<void> {
    this.checkOpen();
  }

  /** Nothing to write: memory is all there is. */
  async commit(): Promise<void> {
    this.checkOpen();
  }

  async close(): Promise<void> {
    this.lifecycle.closed = true;
  }
}
