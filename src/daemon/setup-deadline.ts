/**
 * A bound on a bot's `setup`: a setup that never finishes would leave the bot starting for good,
 * hold a reload (and every later one) and keep the daemon from stopping. The bound is the bot's
 * `handler_timeout`; the setup itself cannot be cancelled, only no longer awaited.
 */
import { raceAbort } from "../api/sleep.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { type Clock, realClock } from "../time/clock.ts";

/** The error of a setup past its bound: `setup did not finish within <ms> ms (handler_timeout)`. */
export class SetupTimeout extends BothostError<"SETUP_TIMEOUT"> {
  constructor(readonly timeoutMs: number) {
    super("SETUP_TIMEOUT", `setup did not finish within ${timeoutMs} ms (handler_timeout)`);
  }
}

/** What bounds a setup: its time limit, on which clock, and a signal that ends the wait early. */
export interface SetupBound {
  timeoutMs: number;
  clock?: Clock;
  /** Aborted when the bot or the daemon stops: the wait ends (rejecting) and its timer is cleared. */
  signal?: AbortSignal | undefined;
}

/**
 * `setup`'s outcome, or a {@link SetupTimeout} rejection once `timeoutMs` has passed on `clock`,
 * or a `SETUP_STOPPED` rejection as soon as `signal` aborts (no timer is left to hold the process).
 */
export function withinSetupTime<T>(setup: Promise<T>, bound: SetupBound): Promise<T> {
  const { timeoutMs, clock = realClock, signal } = bound;
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      done();
      reject(new BothostError("SETUP_STOPPED", "the bot was stopped before its setup finished"));
    };
    const timer = clock.setTimeout(() => {
      done();
      reject(new SetupTimeout(timeoutMs));
    }, timeoutMs);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    setup.then(
      (value) => {
        done();
        resolve(value);
      },
      (err: unknown) => {
        done();
        reject(err);
      },
    );
  });
}

/** `work`'s value, or undefined as soon as `signal` aborts (a later outcome of `work` is then dropped). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return raceAbort(work, signal).catch((err: unknown) => {
    if (signal.aborted) return undefined;
    throw err;
  });
}
