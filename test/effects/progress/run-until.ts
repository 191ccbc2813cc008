/** The progress tests' way to let time pass on the harness's held clock until something holds. */
import { clock, settle } from "./harness.ts";

/** Move the clock a second at a time until `until` holds (at most two minutes of it). */
export async function runUntil<T>(until: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 120; i++) {
    const value = until();
    if (value) return value;
    await clock.advance(1_000);
    await settle();
  }
  throw new Error("runUntil: not reached within 120 s of the clock");
}
