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

/**
 * An error raised by the router or the conversation queue.
 *
 * @example
 * ```ts
 * bot.on("message", async (ctx) => {
 *   await work(ctx.signal).catch((err) => {
 *     if (isRouterError(err) && err.code === "ROUTER_HANDLER_TIMEOUT") ctx.log.warn({}, "gave up");
 *   });
 * });
 * ```
 */
export class RouterError extends BothostError<RouterErrorCode> {
  constructor(code: RouterErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "RouterError";
  }
}

/** True for any {@link RouterError}. */
export function isRouterError(err: unknown): err is RouterError {
  return err instanceof RouterError;
}
