/**
 * Failures a run again cannot mend: the request itself is wrong, refused by the server (a 4xx
 * such as `STREAM_DOES_NOT_EXIST`, `BAD_REQUEST` for a snippet over its size: api/refusals.ts)
 * or by bothost before sending it (`SNIPPET_INVALID`, `TOPIC_TOO_LONG`…). The handler would make
 * the same request and get the same answer, at the cost of the account's calls (200 a minute)
 * and of its conversation's next messages, held meanwhile: such a run is not retried but kept as a
 * dead letter at once, its error naming the refusal and the parameter at fault.
 */
import { isApiError } from "../api/errors.ts";
import { type Refusal, serverRefusal } from "../api/refusals.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { NoRetry } from "../errors/no-retry.ts";
import { whereThrown } from "../errors/where-thrown.ts";
import { RouterError } from "./router-error.ts";

export type { Refusal };

/**
 * bothost's own codes for a request it refused before sending it, or for the server's answer it
 * words itself (`SCHEDULE_NOT_FOUND`: a 404 to a cancel), each with the parameter at fault when
 * the error does not name it in a `field`.
 */
export const LOCAL_REFUSALS: ReadonlyMap<string, string | undefined> = new Map([
  ["SNIPPET_INVALID", undefined],
  ["SNIPPET_NOT_FOUND", "title"],
  ["SCHEDULE_INVALID", undefined],
  ["SCHEDULE_NOT_FOUND", "id"],
  ["CONTENT_TOO_LONG", "content"],
  ["TOPIC_TOO_LONG", "topic"],
  ["REPORT_INVALID", undefined],
  ["REACT_NO_MESSAGE", "messageId"],
  ["REPLY_NO_CONVERSATION", undefined],
  ["UNSUPPORTED_FEATURE", undefined],
  // A `ctx.prompt()` option, or a helper's argument, the code got wrong: its message names it.
  ["PROMPT_OPTIONS", undefined],
  ["INVALID_ARGUMENT", undefined],
]);

/** The refusal `err` is, if the request it failed on is wrong as made (see the file's comment). */
export function refusalOf(err: unknown): Refusal | undefined {
  const server = serverRefusal(err);
  if (server || !ownError(err) || !LOCAL_REFUSALS.has(err.code)) return server;
  const field = (err as { field?: unknown }).field;
  const parameter = typeof field === "string" ? field : LOCAL_REFUSALS.get(err.code);
  // bothost's word for a server's answer (a 404 to a cancel: SCHEDULE_NOT_FOUND) keeps its status.
  const status = isApiError(err.cause) ? err.cause.status : undefined;
  return {
    code: err.code,
    reason: err.message,
    ...(status !== undefined && { status }),
    ...(parameter !== undefined && { parameter }),
  };
}

/**
 * A `BothostError`, known by its class or, from another copy of the package (a bot module whose
 * "bothost" is not the daemon's, whose classes `instanceof` does not know), by its string `code`
 * (`refusalOf` then takes only bothost's own refusal codes).
 */
function ownError(err: unknown): err is BothostError {
  return (
    err instanceof BothostError ||
    (err instanceof Error && typeof (err as { code?: unknown }).code === "string")
  );
}

/** No attempt after this one: the handler threw `NoRetry`, or its request was refused. */
export function isFinal(err: unknown): boolean {
  return err instanceof NoRetry || refusalOf(err) !== undefined;
}

/** `refusal` in a few words: who refused, the code and status, the parameter (and value) at fault. */
export function describeRefusal(refusal: Refusal): string {
  const by = refusal.status === undefined ? "before it was sent" : "by the server";
  const code = refusal.status === undefined ? refusal.code : `${refusal.status} ${refusal.code}`;
  const value = refusal.value === undefined ? "" : ` = ${JSON.stringify(refusal.value)}`;
  const parameter = refusal.parameter === undefined ? "" : `, parameter ${refusal.parameter}${value}`;
  return `request refused ${by} (${code}${parameter})`;
}

/**
 * What a dead letter keeps of `err`, a refusal: its name and stack, and its message followed by
 * what was refused and that it was not retried (`bothost failed show` reads it there). A refusal
 * before sending is the bot's own mistake: its stack is only the place in the bot's code.
 */
export function refusedError(err: unknown, refusal: Refusal): Error {
  const original = err instanceof Error ? err : undefined;
  const kept = new Error(`${original?.message ?? refusal.reason} [${describeRefusal(refusal)}: not retried]`);
  kept.name = original?.name ?? "Error";
  if (original?.stack !== undefined) kept.stack = ownMistake(original)?.stack ?? original.stack;
  return kept;
}

/**
 * `err` as said of a handler's mistake in calling a helper (a refusal before sending: a bad
 * argument), with the place in the bot's code for its stack, not bothost's frames; undefined for
 * any other error, whose stack is said whole.
 */
export function ownMistake(err: unknown): Error | undefined {
  if (!(err instanceof BothostError)) return undefined;
  const refusal = refusalOf(err);
  if (refusal === undefined || refusal.status !== undefined) return undefined;
  return atBotsCall(err);
}

/** `err` with, for its stack, only the place in the bot's code that made the call it failed on. */
export function atBotsCall(err: Error): Error {
  return shownAt(err, whereThrown(err));
}

/**
 * `err`, the handler timeout's reason (`ROUTER_HANDLER_TIMEOUT`) that a call made past it threw
 * back, with no stack but its name and message: its frames are bothost's own (the timer that cut
 * the run), nothing of the bot's code. Undefined for any other error.
 */
export function timeoutShown(err: unknown): Error | undefined {
  if (!(err instanceof RouterError && err.code === "ROUTER_HANDLER_TIMEOUT")) return undefined;
  return shownAt(err, undefined);
}

/** A copy of `err` whose stack is its name and message, then `at` (a place in the bot's code) if any. */
function shownAt(err: Error, at: string | undefined): Error {
  const shown = Object.assign(Object.create(Object.getPrototypeOf(err) as object) as Error, err);
  shown.message = err.message;
  shown.stack = `${err.name}: ${err.message}${at === undefined ? "" : `\n    at ${at}`}`;
  return shown;
}
