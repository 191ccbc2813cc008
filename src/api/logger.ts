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

/**
 * `parent.child(bindings)`, made when a line is first logged: a daemon gives each bot's client a
 * child logger, and a pino child holds a few hundred bytes that most clients never log through.
 */
export function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  if (!parent.child) return parent;
  return new LazyChild(parent, bindings);
}

class LazyChild implements Logger {
  #made: Logger | undefined;
  readonly #parent: Logger;
  readonly #bindings: Record<string, unknown>;

  constructor(parent: Logger, bindings: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #logger(): Logger {
    this.#made ??= this.#parent.child?.(this.#bindings) ?? this.#parent;
    return this.#made;
  }

  #on(level: string): boolean {
    return this.#made !== undefined || this.isLevelEnabled(level);
  }

  isLevelEnabled(level: string): boolean {
    return (this.#made ?? this.#parent).isLevelEnabled?.(level) ?? true;
  }

  debug(obj: Record<string, unknown>, msg?: string): void {
    if (this.#on("debug")) this.#logger().debug(obj, msg);
  }

  info(obj: Record<string, unknown>, msg?: string): void {
    if (this.#on("info")) this.#logger().info(obj, msg);
  }

  warn(obj: Record<string, unknown>, msg?: string): void {
    if (this.#on("warn")) this.#logger().warn(obj, msg);
  }

  error(obj: Record<string, unknown>, msg?: string): void {
    if (this.#on("error")) this.#logger().error(obj, msg);
  }

  child(bindings: Record<string, unknown>): Logger {
    return this.#logger().child?.(bindings) ?? this.#logger();
  }
}
