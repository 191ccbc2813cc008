import { describe, expect, it } from "vitest";
import { CHECK_AFTER_MS, decideFailed, ReconcileTimers } from "../../src/scheduler/booking-policy.ts";
import { ManualClock } from "../support/manual-clock.ts";

const T = Date.parse("2026-03-02T08:00:00Z");
const MINUTE = 60_000;

describe("the failed-booking policy", () => {
  it("moves a first failure to a minute from now while at most 30 minutes late, else drops it", () => {
    expect(decideFailed({ occurrenceMs: T, retried: false, nowMs: T + 11 * MINUTE })).toEqual({
      action: "reschedule",
      atMs: T + 12 * MINUTE,
    });
    expect(decideFailed({ occurrenceMs: T, retried: false, nowMs: T + 30 * MINUTE })).toEqual({
      action: "reschedule",
      atMs: T + 31 * MINUTE,
    });
    expect(decideFailed({ occurrenceMs: T, retried: false, nowMs: T + 30 * MINUTE + 1 })).toEqual({
      action: "drop",
      reason: "too-late",
    });
  });

  it("drops a second failure of the same occurrence, however soon", () => {
    expect(decideFailed({ occurrenceMs: T, retried: true, nowMs: T + 11 * MINUTE })).toEqual({
      action: "drop",
      reason: "failed-again",
    });
  });
});

describe("reconcile timers", () => {
  it("retries with backoff 1, 2, 4… minutes up to 30, one at a time, and resets after a success", async () => {
    const clock = new ManualClock(T);
    const fired: number[] = [];
    const timers = new ReconcileTimers(clock, () => fired.push((clock.now() - T) / MINUTE));
    for (let i = 0; i < 7; i++) {
      timers.retry();
      timers.retry(); // ignored: one pending retry at a time
      await clock.tick(60 * MINUTE);
    }
    expect(fired).toEqual([1, 62, 124, 188, 256, 330, 390]);
    timers.succeeded();
    fired.length = 0;
    const start = clock.now();
    timers.retry();
    await clock.tick(MINUTE);
    expect(fired).toEqual([(start - T) / MINUTE + 1]);
  });

  it("checks 12 minutes after the earliest booking still ahead, re-armed on each call; stop cancels", async () => {
    const clock = new ManualClock(T);
    const fired: number[] = [];
    const timers = new ReconcileTimers(clock, () => fired.push(clock.now()));
    timers.checkAfter([T + 60 * MINUTE, T - 20 * MINUTE, T + 30 * MINUTE]);
    expect(clock.nextDueAt()).toBe(T + 30 * MINUTE + CHECK_AFTER_MS);
    timers.checkAfter([T + 60 * MINUTE]);
    expect(clock.pendingTimers).toBe(1);
    await clock.tick(2 * 60 * MINUTE);
    expect(fired).toEqual([T + 60 * MINUTE + CHECK_AFTER_MS]);
    timers.checkAfter([clock.now() + MINUTE]);
    timers.retry();
    timers.stop();
    expect(clock.pendingTimers).toBe(0);
  });
});
