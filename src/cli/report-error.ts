/**
 * How the CLI reports an error that stops it: a config or module problem as its located message
 * (no stack trace: it is the user's to fix), anything else with its message and exit code 1.
 */
import { isConfigError } from "../config/config-error.ts";
import { exitCodeFor } from "../config/exit-codes.ts";
import { isBothostError } from "../errors/bothost-error.ts";

export function reportStartupError(err: unknown): number {
  if (isConfigError(err)) {
    process.stderr.write(`${err.format()}\n`);
  } else if (isBothostError(err)) {
    process.stderr.write(`bothost: ${err.message} [${err.code}]\n`);
  } else {
    process.stderr.write(
      `bothost: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  return exitCodeFor(err);
}
