/**
 * How a handler's run ends, counted and said: handled, or failed (a refused prompt's end, the
 * stop's deadline, a store outage, or the bot's own error). The failure stage decides what
 * becomes of a failed run (handler-failures.ts); this only counts it and writes its line.
 */
import {
  BadResponseError,
  isApiError,
  isAuthError,
  isNetworkError,
  isRateLimitError,
} from "../api/errors.ts";
import { monotonicMs } from "../time/clock.ts";
import type { BotContext } from "./context.ts";
import { promptEndLine, promptUnanswered } from "./dialogs/prompt-error.ts";
import type { DispatcherParts } from "./dispatcher-parts.ts";
import { outageOf, STORE_OUTAGE_LINE } from "./handler-failures.ts";
import { atBotsCall, ownMistake, timeoutShown } from "./handler-failures-refusals.ts";
import type { DispatchStats } from "./incoming.ts";
import { RouterError } from "./router-error.ts";
import { runLog } from "./run-log.ts";
import { fenced } from "./stop-cut.ts";

type Parts = Pick<DispatcherParts, "metrics" | "ledgerCommits" | "failures">;

/** The run of `ctx`, begun at `started` (monotonic ms; 0 without metrics), handled. */
export function runHandled(o: Parts, stats: DispatchStats, ctx: BotContext<unknown>, started: number): void {
  stats.handled++;
  o.metrics?.eventHandled(ctx.event.type, (monotonicMs() - started) / 1000);
}

/**
 * An event of `type` failed for good (kept as a dead letter, or it threw `NoRetry` with
 * `deadLetter: false`): once in the status's `failed` and in its metric, whatever its attempts.
 */
export function failedForGood(o: Parts, stats: DispatchStats, type: string): void {
  stats.failed++;
  o.metrics?.eventFailedForGood(type);
}

/** The run of `ctx` threw `err`: counted, and said at the level its cause deserves. */
export function runFailed(
  o: Parts,
  stats: DispatchStats,
  ctx: BotContext<unknown>,
  err: unknown,
  started: number,
): void {
  if (promptUnanswered(err)) {
    // A normal end of a conversation (the failure stage then neither retries nor keeps it).
    runLog(ctx).info({ prompt: err.message }, promptEndLine(err));
    runHandled(o, stats, ctx, started);
    return;
  }
  const outage = outageOf(err);
  const said = outage !== undefined && o.ledgerCommits.health?.store.repeats(err);
  const seconds = (monotonicMs() - started) / 1000;
  if (outage) o.metrics?.storeOutage(ctx.event.type, seconds);
  else o.metrics?.eventFailed(ctx.event.type, seconds);
  // The stop's deadline cut it short: the failure stage says what becomes of it (no error of the
  // bot's, so no stack).
  if (err instanceof RouterError && err.code === "ROUTER_ABORTED")
    runLog(ctx)[o.failures.cutLevel]({ code: err.code }, "handler cut short by the shutdown's deadline");
  // The store failed the run (a read or write; a lost lease's at debug): not the bot's fault; said once.
  else if (outage) runLog(ctx)[said || fenced(outage) ? "debug" : "warn"](outage, STORE_OUTAGE_LINE);
  // The chat server failed a call of the handler: no fault of its code, and run again; said
  // with the place of the call in the bot's code, not bothost's frames.
  else if (serverFault(err)) runLog(ctx).warn({ err: atBotsCall(err) }, "handler failed");
  // A helper called wrongly: the error and the place in the bot's code, not bothost's frames; the
  // handler timeout's reason, thrown back by a call made past it: the error alone (its frames are the timer's).
  else runLog(ctx).error({ err: ownMistake(err) ?? timeoutShown(err) ?? err }, "handler failed");
}

/**
 * The chat server's failure, not the request's: a 5xx, a page that is not JSON (a proxy's), no
 * answer, or a 429 whose wait is longer than the client takes by itself.
 */
function serverFault(err: unknown): err is Error {
  return (
    isRateLimitError(err) ||
    isNetworkError(err) ||
    err instanceof BadResponseError ||
    (isApiError(err) && !isAuthError(err) && err.status >= 500)
  );
}
