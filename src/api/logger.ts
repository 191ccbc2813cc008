/**
 * The logging interface the client writes to: a subset of pino's, so a pino `Logger` (or a
 * child of one) fits as is. The default writes nothing.
 */

/** One log method: a structured object first, then an optional message (pino's calling style). */
export type LogFn = (obj: Record<string, unknown>, msg?: string) => void;

/**
 * What bothost needs from a logger. pino's `Logger` satisfies it.
 *
 * @example
 * ```ts
 * import pino from "pino";
 * const client = createClient({ url, email, apiKey, logger: pino({ level: "info" }) });
 * ```
 */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child?: (bindings: Record<string, unknown>) => Logger;
}

const noop: LogFn = () => {};

/** A logger that drops everything: the client's default. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
