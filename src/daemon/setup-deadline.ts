/**
 * A bound on a bot's `setup`: a setup that never finishes would leave the bot starting for good,
 * hold a reload (and every later one) and keep the daemon from stopping. The bound is the bot's
 * `handler_timeout`; the setup itself cannot be cancelled, only no longer awaited.
 */
import { BothostError } from "../errors/bothost-error.ts";
import { type Clock, realClock } from "../time/clock.ts";

/** The error of a setup past its bound: `setup did not finish within <ms> ms (handler_timeout)`. */
export class SetupTimeout extends BothostError<"SETUP_TIMEOUT"> {
  constructor(readonly timeoutMs: number) {
    super("SETUP_TIMEOUT", `setup did not finish within ${timeoutMs} ms (handler_timeout)`);
  }
}

/** `setup`'s outcome, or a {@link SetupTimeout} rejection once `timeoutMs` has passed on `clock`. */
export function withinSetupTime<T>(
  setup: Promise<T>,
  timeoutMs: number,
  clock: Clock = realClock,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(new SetupTimeout(timeoutMs)), timeoutMs);
    setup.then(
      (value) => {
        clock.clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clock.clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** `work`'s value, or undefined as soon as `signal` aborts (a later rejection of `work` is then dropped). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) resolve(undefined);
        else resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) resolve(undefined);
        else reject(err);
      },
    );
  });
}
