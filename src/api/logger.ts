/** One log method: a structured object first, then an optional message (pino's calling style). */
type LogFn = (obj: Record<string, unknown>, msg?: string) => void;

/** What bothost needs from a logger: a subset of pino's, so a pino `Logger` (or a child) fits as is. */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child?: (bindings: Record<string, unknown>) => Logger;
  /** Whether a level is logged (pino's); lets a caller skip building a line nobody reads. */
  isLevelEnabled?: (level: string) => boolean;
}

const noop: LogFn = () => {};

/** A logger that drops everything: the client's default. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
