/**
 * A refused reload, as the daemon logs it whichever way the reload came (SIGHUP, the admin socket,
 * the HTTP admin route): one error line with the located problems; the old config runs on.
 */
import type { Logger } from "pino";
import { isConfigError } from "../config/config-error.ts";

/** Why a reload was refused: a config's located errors, or the error's message. */
export function reloadProblems(err: unknown): string {
  return isConfigError(err) ? err.format() : err instanceof Error ? err.message : String(err);
}

/** Log `err`, the reason a reload was refused. */
export function logRefusedReload(log: Logger, err: unknown): void {
  const problems = reloadProblems(err);
  log.error({ problems }, `reload refused; the daemon keeps running the old config: ${problems}`);
}

/** `reload`, its refusals logged (then passed on to its caller). */
export function loggingRefusals<T>(log: Logger, reload: () => Promise<T>): () => Promise<T> {
  return () =>
    reload().catch((err: unknown) => {
      logRefusedReload(log, err);
      throw err;
    });
}
