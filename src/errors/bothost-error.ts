/**
 * The one base class of every error bothost raises on purpose.
 *
 * Each subclass has a stable `name` and a string-literal `code` (listed in
 * docs/reference/errors.md). Messages say how to fix the problem and never contain an API key,
 * token or secret.
 */
export class BothostError<Code extends string = string> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = "BothostError";
  }
}

/** True for any error bothost raised on purpose (as opposed to a bug or a foreign error). */
export function isBothostError(err: unknown): err is BothostError {
  return err instanceof BothostError;
}
