/**
 * A run failed on the state store's outage (a Redis outage, a lost lease, the disk full): not the
 * handler's failure. Its log lines, and what of the error they say (handler-failures.ts).
 */
import { isStoreOutage, type StateErrorCode } from "../state/state-error.ts";

/** The log line of a run that failed on a state store outage (see {@link outageOf}). */
export const STORE_OUTAGE_LINE = "the run failed on a state store outage, not in the handler";
/** The log line of an event whose every attempt failed, the last on the store's outage (see `settle`). */
export const STORE_WAIT_LINE =
  "the state store's outage outlasted every attempt: the event waits for the store, its conversation held";
/** {@link STORE_WAIT_LINE} for a cron job's occurrence. */
export const STORE_WAIT_JOB_LINE =
  "the state store's outage outlasted every attempt: the cron job's occurrence waits for the store, the job's firings meanwhile skipped";

/**
 * What to log of `err` when it is a state store outage (a Redis outage, a lost lease: see
 * `isStoreOutage`), which the handler only passed on: its code and message, without the stack,
 * which would point at the bot's code. Undefined for any other failure, the handler's own.
 */
export function outageOf(err: unknown): { code: StateErrorCode; reason: string } | undefined {
  return isStoreOutage(err) ? { code: err.code, reason: err.message } : undefined;
}
