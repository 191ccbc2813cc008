/**
 * The names of an error's classes, from its own up to BothostError, kept on each instance (not
 * enumerable: logs and JSON do not show it) under a key every copy of bothost shares.
 */
const CLASSES = Symbol.for("bothost.errorClasses");

/**
 * The one base class of every error bothost raises on purpose.
 *
 * Each subclass has a stable `name` and a string-literal `code` (listed in
 * docs/reference/errors.md). Messages say how to fix the problem and never contain an API key,
 * token or secret.
 */
export class BothostError<Code extends string = string> extends Error {
  /**
   * `err instanceof PromptError` (or any of bothost's error classes) also holds for an error made
   * by another copy of bothost loaded in the same process, as when a bot module's folder installed
   * its own: the copy's class of the same name. A `NoRetry` a bot throws is then the daemon's
   * `NoRetry`, and the `PromptError` the daemon throws is the bot's.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class asked (PromptError for `err instanceof PromptError`), not BothostError.
    // biome-ignore lint/complexity/noThisInStatic: the class asked, which a subclass's name gives
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const names = (value as { [CLASSES]?: unknown } | null | undefined)?.[CLASSES];
    // biome-ignore lint/complexity/noThisInStatic: as above
    return Array.isArray(names) && names.includes(this.name);
  }

  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = "BothostError";
    const names: string[] = [];
    for (let c: unknown = new.target; typeof c === "function" && c !== Error; c = Object.getPrototypeOf(c)) {
      names.push(c.name);
    }
    Object.defineProperty(this, CLASSES, { value: names });
  }
}

/** True for any error bothost raised on purpose (as opposed to a bug or a foreign error). */
export function isBothostError(err: unknown): err is BothostError {
  return err instanceof BothostError;
}
