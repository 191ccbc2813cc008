/**
 * A dialog's write tried again while the store fails (a Redis outage of any length): the
 * conversation waits meanwhile, rather than a message be taken out of its order or an answer be
 * left unrecorded. Only a stop (its deadline aborts `signal`) or a refusal that trying again
 * cannot change (the dialog ended, another writer moved its log) ends the tries; for a write
 * someone waits on (an operator's end), `tries` bounds them too, the last failure thrown.
 */
import type { Logger } from "pino";
import { sleep } from "../../api/sleep.ts";
import type { Clock } from "../../time/clock.ts";
import { outageOf } from "../handler-failures-outage.ts";
import { fenced } from "../stop-cut.ts";
import type { StoreHealth } from "../store-health.ts";
import { DialogEnded, LogMoved } from "./dialog-log.ts";

/** Pauses between tries: the last one repeats until the write lands. */
const STORE_RETRY_MS = [250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/** What the tries wait on, where they are logged, and who is told of the store's outage. */
export interface RetryOn {
  clock: Clock;
  log: Logger;
  health: StoreHealth | undefined;
}

export async function retrying<T>(
  on: RetryOn,
  signal: AbortSignal,
  write: () => Promise<T>,
  tries = Number.POSITIVE_INFINITY,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    let result: T;
    try {
      result = await write();
    } catch (err) {
      if (err instanceof DialogEnded || err instanceof LogMoved || signal.aborted) throw err;
      // Once the outage is said (store-health.ts), each of its tries only at debug; so are those
      // of a write refused for a lost lease, no outage (the lease's loss is said once, and the
      // bot's stop soon ends the tries).
      const said = on.health?.repeats(err) === true || fenced(outageOf(err));
      if (attempt + 1 >= tries) throw err;
      const pause = STORE_RETRY_MS[Math.min(attempt, STORE_RETRY_MS.length - 1)] as number;
      on.log[said ? "debug" : "warn"](
        { err, retryInMs: pause },
        "the state store failed a dialog's write; trying again",
      );
      await sleep(on.clock, pause, signal).catch(() => {});
      continue;
    }
    on.health?.landed();
    return result;
  }
}
