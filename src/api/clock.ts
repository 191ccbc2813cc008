/**
 * The real clock with an abortable sleep, for code that only needs to wait. Code that must be
 * driven by tests takes the project's injectable `Clock` (src/helpers/clock.ts) instead; the
 * client's `clock` option is that type.
 */
import { realClock } from "../helpers/clock.ts";
import { sleep } from "./sleep.ts";

/** `Date.now()` and an abortable wait that rejects with `signal.reason`. */
export const systemClock = {
  now: (): number => realClock.now(),
  sleep: (ms: number, signal?: AbortSignal): Promise<void> => sleep(realClock, ms, signal),
};
