/**
 * A promise that bot code let fail with nothing awaiting it (a `ctx.send` its handler did not
 * await, say) would end Node.js's process, and every bot with it, with a stack trace on stderr.
 * The daemon's commands log it instead, at error level, and go on.
 */
import type { Logger } from "pino";

export const STRAY_REJECTION_LINE =
  "a promise failed with nothing awaiting it (a call a handler or job did not await?): the daemon goes on";

/** Log each unhandled rejection on `log` from now on; returns what removes the listener. */
export function logStrayRejections(log: Pick<Logger, "error">): () => void {
  const onRejection = (err: unknown) => log.error({ err }, STRAY_REJECTION_LINE);
  process.on("unhandledRejection", onRejection);
  return () => process.off("unhandledRejection", onRejection);
}
