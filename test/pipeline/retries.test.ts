import { describe, expect, it } from "vitest";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { retryDelay, runWithRetries } from "../../src/pipeline/retries.ts";
import { ManualClock } from "../../src/time/clock.ts";

const policy = { attempts: 4, backoffMs: 1_000, maxBackoffMs: 3_000 };

/** Runs `runWithRetries` on a manual clock, moving time on until it settles. */
async function settle(run: (n: number) => unknown, signal = new AbortController().signal) {
  const clock = new ManualClock(1_000_000);
  const runs: number[] = [];
  const retries: Array<[number, number]> = [];
  let done = false;
  const outcome = runWithRetries(
    (n) => {
      runs.push(clock.now());
      return run(n);
    },
    policy,
    { clock, signal, onRetry: (n, _e, delay) => retries.push([n, delay]) },
  ).finally(() => {
    done = true;
  });
  while (!done) await clock.tick(500);
  return { outcome: await outcome, runs: runs.map((t) => t - 1_000_000), retries };
}

describe("runWithRetries", () => {
  it("runs a succeeding handler once", async () => {
    const { outcome, runs } = await settle(() => {});
    expect(outcome).toEqual({ ok: true, attempts: 1 });
    expect(runs).toEqual([0]);
  });

  it("pauses 1 s, 2 s, then 3 s (the cap) between runs, and succeeds on a later run", async () => {
    const { outcome, runs, retries } = await settle((n) => {
      if (n < 4) throw new Error(`fail ${n}`);
    });
    expect(outcome).toEqual({ ok: true, attempts: 4 });
    expect(runs).toEqual([0, 1_000, 3_000, 6_000]);
    expect(retries).toEqual([
      [1, 1_000],
      [2, 2_000],
      [3, 3_000],
    ]);
  });

  it("gives up after the last attempt with the last error and both failure times", async () => {
    const { outcome } = await settle((n) => Promise.reject(new Error(`fail ${n}`)));
    expect(outcome).toMatchObject({
      ok: false,
      attempts: 4,
      firstFailedAt: 1_000_000,
      lastFailedAt: 1_006_000,
      interrupted: false,
    });
    expect((outcome as { error: Error }).error.message).toBe("fail 4");
  });

  it("stops at once on NoRetry", async () => {
    const { outcome, runs } = await settle(() => {
      throw new NoRetry("malformed");
    });
    expect(outcome).toMatchObject({ ok: false, attempts: 1, interrupted: false });
    expect(runs).toEqual([0]);
  });

  it("a stop during a pause ends the runs, marked interrupted", async () => {
    const stop = new AbortController();
    const { outcome, runs } = await settle((n) => {
      if (n === 2) stop.abort(new Error("stopping"));
      throw new Error(`fail ${n}`);
    }, stop.signal);
    expect(outcome).toMatchObject({ ok: false, attempts: 2, interrupted: true });
    expect(runs).toEqual([0, 1_000]);
  });

  it("retryDelay doubles from the backoff up to the cap", () => {
    expect(
      [1, 2, 3, 4, 5].map((n) => retryDelay({ attempts: 9, backoffMs: 2_000, maxBackoffMs: 30_000 }, n)),
    ).toEqual([2_000, 4_000, 8_000, 16_000, 30_000]);
  });
});
