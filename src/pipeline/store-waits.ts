/**
 * Runs waiting for the state store (handler-failures.ts): every attempt failed, the last on the
 * store's outage. They run again one at a time for the whole bot, each after a pause that grows
 * while the store keeps failing (1 s, doubling to 30 s), so that however many conversations wait,
 * a long outage costs the server at most one run's calls per pause (the account's budget is 200
 * calls a minute). Once a run gets through, the store is back: the next ones go without a pause.
 */
import { sleep } from "../api/sleep.ts";
import { isStoreOutage } from "../state/state-error.ts";
import type { Clock } from "../time/clock.ts";
import type { StoreHealth } from "./store-health.ts";

/** Pauses before a run again while the store fails: the last one repeats. */
const OUTAGE_PAUSES_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

export class StoreWaits {
  readonly #clock: Clock;
  readonly #health: StoreHealth | undefined;
  /** The runs waiting, chained: each goes once the one before it is done. */
  #tail: Promise<unknown> = Promise.resolve();
  /** The runs again that failed on the outage since the last that got through. */
  #failed = 0;
  /** The last run again got through: the store answers. */
  #back = false;

  constructor(clock: Clock, health?: StoreHealth) {
    this.#clock = clock;
    this.#health = health;
  }

  /**
   * `again` run once the runs waiting before it are done and the outage's pause has passed.
   * Rejects with its failure, or with `signal`'s reason once it aborts (`again` then not run).
   */
  run(signal: AbortSignal, again: () => Promise<unknown>): Promise<unknown> {
    const turn = this.#tail.then(async () => {
      const pause = this.#back ? 0 : OUTAGE_PAUSES_MS[Math.min(this.#failed, OUTAGE_PAUSES_MS.length - 1)];
      await sleep(this.#clock, pause as number, signal);
      try {
        await again();
        [this.#back, this.#failed] = [true, 0];
        this.#health?.landed();
      } catch (err) {
        if (isStoreOutage(err)) [this.#back, this.#failed] = [false, this.#failed + 1];
        throw err;
      }
    });
    this.#tail = turn.catch(() => undefined);
    return turn;
  }
}
