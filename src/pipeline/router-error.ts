import { BothostError } from "../errors/bothost-error.ts";

/**
 * Why the router refused or stopped something:
 * - `ROUTER_INVALID_FILTER`: a filter passed to `on()` has an unknown key, a bad value, or can
 *   never match the event type (raised at setup, before any event arrives).
 * - `ROUTER_INVALID_ARGUMENT`: another setup mistake (event type, handler, queue option).
 * - `ROUTER_NEXT_CALLED_TWICE`: a middleware called `next()` more than once.
 * - `ROUTER_HANDLER_TIMEOUT`: the abort reason of a handler's signal when it ran too long.
 * - `ROUTER_ABORTED`: the abort reason when the queue was told to abort all work (shutdown).
 */
export type RouterErrorCode =
  | "ROUTER_INVALID_FILTER"
  | "ROUTER_INVALID_ARGUMENT"
  | "ROUTER_NEXT_CALLED_TWICE"
  | "ROUTER_HANDLER_TIMEOUT"
  | "ROUTER_ABORTED";

/** An error raised by the router or the conversation queue. */
export class RouterError extends BothostError<RouterErrorCode> {
  override readonly name = "RouterError";
}

/** A mistake in how the router or the queue was called (`ROUTER_INVALID_ARGUMENT`). */
export function invalidArgument(message: string): RouterError {
  return new RouterError("ROUTER_INVALID_ARGUMENT", message);
}

/** `value`, refused unless it is a positive whole number. */
export function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw invalidArgument(`${name} must be a positive integer, got ${String(value)}.`);
  return value;
}

/** The abort reason of a handler's signal once it ran past `ms` (`ROUTER_HANDLER_TIMEOUT`). */
export function handlerTimedOut(ms: number, key?: string): RouterError {
  const which = key === undefined ? "The handler" : `The handler for ${key}`;
  return new RouterError("ROUTER_HANDLER_TIMEOUT", `${which} ran longer than ${ms} ms.`);
}

/**
 * Whether `signal` was aborted by the bot's stop past its deadline (`ROUTER_ABORTED`, the queue's
 * `abortAll`), not by a handler timeout: work it guarded must not start anything new.
 */
export function stoppedBy(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof RouterError && reason.code === "ROUTER_ABORTED";
}
