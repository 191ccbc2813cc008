/**
 * One watcher of dead-letter retry requests for every bot of a daemon. A request made through
 * this daemon (its admin routes, `daemon.letters.retry`) is passed on at once ({@link check}).
 * A request another process writes to a shared store (Redis: another instance, or `bothost
 * failed` working on the store with no daemon answering) is found by one read of every bot's
 * retry generation every {@link RETRY_CHECK_MS}, whatever the number of bots. A store only this
 * process can open (the embedded one holds a lock) needs no periodic read at all.
 */
import type { Logger } from "pino";
import type { RetryRequests } from "../events/dead-letter-source.ts";
import type { DeadLetterOffice } from "../state/dead-letter-office.ts";
import { parseDeadLetterId, retryGenerations } from "../state/dead-letters.ts";
import { isStoreOutage } from "../state/state-error.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";
import { coalesce } from "./coalesce.ts";
import { stateLocation } from "./server-check.ts";

/** How often a daemon on a shared store reads the retry generations (one read for all bots). */
export const RETRY_CHECK_MS = 2_000;

export interface RetryWatcherOptions {
  /** The store the dead letters are kept in (the daemon's root store). */
  store: StateStore;
  /** True when other processes write to the store (Redis): then it is read periodically. */
  shared: boolean;
  clock: Clock;
  log: Logger;
}

interface Watch {
  generation: number;
  look: () => void;
}

export class RetryWatcher implements RetryRequests {
  readonly #o: RetryWatcherOptions;
  readonly #watches = new Map<string, Watch>();
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(options: RetryWatcherOptions) {
    this.#o = options;
  }

  watch(bot: string, generation: number, look: () => void): () => void {
    const entry: Watch = { generation, look };
    this.#watches.set(bot, entry);
    if (this.#o.shared) this.#arm();
    return () => {
      if (this.#watches.get(bot) === entry) this.#watches.delete(bot);
    };
  }

  /** Bots watched now (one per running bot). */
  get watching(): number {
    return this.#watches.size;
  }

  /**
   * Read every bot's generation once and tell each bot whose generation moved. Calls during a
   * check share the next one (a request made meanwhile is not missed).
   */
  readonly check: () => Promise<void> = coalesce(() => this.#checkOnce());

  /**
   * `letters`, with each retry requested through them passed to the bots at once; a retry's
   * outcome names the letters of bots not watched here (not running in this daemon).
   */
  serve(letters: DeadLetterOffice): DeadLetterOffice {
    letters.onRetried = async (ids) => {
      await this.check();
      return ids.filter((id) => !this.#watches.has(parseDeadLetterId(id)?.bot ?? ""));
    };
    return letters;
  }

  /** No more periodic reads. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #checkOnce(): Promise<void> {
    if (this.#watches.size === 0) return;
    let generations: Record<string, number>;
    try {
      generations = await retryGenerations(this.#o.store);
    } catch (err) {
      // A store outage is no fault of the code: its code and message, no stack.
      const fields = isStoreOutage(err) ? { code: err.code, reason: err.message } : { err };
      this.#o.log.warn(fields, "could not read the dead letters' retry requests; trying again shortly");
      return;
    }
    for (const [bot, watch] of this.#watches) {
      const generation = generations[bot] ?? 0;
      if (generation === watch.generation) continue;
      watch.generation = generation;
      watch.look();
    }
  }

  /** One timer for the whole daemon, running while any bot is watched. */
  #arm(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      this.check().finally(() => {
        if (this.#watches.size > 0) this.#arm();
      });
    }, RETRY_CHECK_MS);
  }
}

/** A daemon's watcher: it reads the store periodically only when other processes write to it (Redis). */
export function retryWatcherFor(store: StateStore, clock: Clock, log: Logger): RetryWatcher {
  return new RetryWatcher({ store, shared: "redis" in stateLocation(store), clock, log });
}
