/**
 * An announcement's content function called as a handler is run: handed a signal aborted past the
 * bot's `handler_timeout` and when the bot stops, so that the fetch or API calls it makes with it
 * end when its booking is given up, and raced against that signal, so that one that hangs holds
 * neither the bot's start nor its stop. As for a handler, the time its calls made with the signal
 * wait for the account's rate budget does not count (the function is not stuck then, the account
 * is at its limit), and those calls wait in the budget's background lane: nobody waits on them.
 */
import { callLaneOf } from "../api/budget-line.ts";
import { raceAbort } from "../api/sleep.ts";
import { AttemptTimeout } from "../pipeline/attempt-timeout.ts";
import { isThenable } from "../pipeline/queue-lines.ts";
import { RouterError } from "../pipeline/router-error.ts";
import type { Clock } from "../time/clock.ts";

export type ContentFunction = (occurrence: Date, call: { signal: AbortSignal }) => unknown;

export interface ContentCallBounds {
  clock?: Clock | undefined;
  /** The bot's `handler_timeout`; undefined: bounded by the stop alone. */
  timeoutMs?: number | undefined;
  /** Aborted when the bot stops. */
  stopping?: AbortSignal | undefined;
}

/** `fn`'s text for `occurrence` of announcement `id`; rejects with the signal's reason once it aborts. */
export async function callContent(
  id: string,
  fn: ContentFunction,
  occurrence: Date,
  bounds: ContentCallBounds,
): Promise<unknown> {
  const { clock, timeoutMs: ms, stopping } = bounds;
  const timeout =
    clock === undefined || ms === undefined
      ? undefined
      : new AttemptTimeout(clock, ms, () => timedOut(id, ms));
  const parts = [stopping, timeout?.signal].filter((s): s is AbortSignal => s !== undefined);
  // A signal of its own, to watch and to lane (the bot's stop signal, shared, must carry neither).
  const own = AbortSignal.any(parts);
  timeout?.watch(own);
  callLaneOf(own, "background");
  try {
    if (own.aborted) throw own.reason;
    const made = fn(occurrence, { signal: own });
    return isThenable(made) ? await raceAbort(Promise.resolve(made), own) : made;
  } finally {
    timeout?.clear();
  }
}

function timedOut(id: string, ms: number): RouterError {
  const err = new RouterError(
    "ROUTER_HANDLER_TIMEOUT",
    `announcement "${id}": its content function ran longer than ${ms} ms (the bot's handler_timeout); its booking is tried again later`,
  );
  err.stack = `${err.name}: ${err.message}`; // its frames are bothost's timer's, none of the bot's
  return err;
}
