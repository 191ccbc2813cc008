/**
 * Failures of bot code that nothing catches: a promise it let fail with nothing awaiting it (a
 * `ctx.send` its handler did not await), or an error thrown in a timer or callback of its own
 * (`setTimeout(() => …)`), outside any handler or job. Node.js would end the process, and every
 * bot with it, with a stack trace on stderr. The daemon's commands log them instead, at error
 * level, and go on. An error thrown where no frame of its stack is the user's (in bothost's own
 * code, or a dependency's) is logged at fatal and ends the process, as Node.js would: what it left
 * half done is unknown, and every write the daemon makes survives its end (see delivery.md).
 */
import type { Logger } from "pino";
import { ExitCode } from "../config/exit-codes.ts";
import { whereThrown } from "../errors/where-thrown.ts";

export const STRAY_REJECTION_LINE =
  "a promise failed with nothing awaiting it (a call a handler or job did not await?): the daemon goes on";

export const STRAY_THROW_LINE =
  "bot code threw outside any handler or job (in a timer or callback of its own): the daemon goes on";

export const UNCAUGHT_LINE = "an error nothing caught, not thrown by bot code: the daemon stops";

/** Log each unhandled rejection and uncaught exception on `log` from now on; returns what removes the listeners. */
export function logStrayErrors(log: Pick<Logger, "error" | "fatal" | "flush">): () => void {
  const onRejection = (err: unknown) => log.error({ err }, STRAY_REJECTION_LINE);
  const onThrow = (err: unknown) => {
    // bothost and its dependencies throw errors, never other values: a string thrown is the bot's.
    const at = whereThrown(err);
    if (at !== undefined || !(err instanceof Error)) return log.error({ err, at }, STRAY_THROW_LINE);
    log.fatal({ err }, UNCAUGHT_LINE);
    log.flush();
    process.exit(ExitCode.RuntimeFailure);
  };
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onThrow);
  return () => {
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onThrow);
  };
}
