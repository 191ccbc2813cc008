import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_DELAY_MS, realClock } from "../../src/time/clock.ts";
import { ManualClock } from "../support/manual-clock.ts";

describe("ManualClock", () => {
  it("fires timers in due order, ties in creation order, and advances now", async () => {
    const clock = new ManualClock(1000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 200);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 200);
    clock.setTimeout(() => fired.push(`late@${clock.now()}`), 10_000);
    await clock.tick(200);
    expect(fired).toEqual(["a@1100", "b@1200", "c@1200"]);
    expect(clock.now()).toBe(1200);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextDueAt()).toBe(11_000);
  });

  it("cleared timers never fire; timers set by timers fire within the same tick", async () => {
    const clock = new ManualClock();
    const fired: number[] = [];
    const handle = clock.setTimeout(() => fired.push(-1), 50);
    clock.clearTimeout(handle);
    clock.setTimeout(() => clock.setTimeout(() => fired.push(clock.now()), 30), 40);
    await clock.tickTo(100);
    expect(fired).toEqual([70]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("lets async work started by a timer reach its next await before the next timer", async () => {
    const clock = new ManualClock();
    const log: string[] = [];
    clock.setTimeout(async () => {
      await Promise.resolve();
      log.push("async done");
    }, 10);
    clock.setTimeout(() => log.push("second timer"), 20);
    await clock.tick(20);
    expect(log).toEqual(["async done", "second timer"]);
  });
});

describe("realClock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("chains delays longer than 2^31-1 ms instead of firing after 1 ms", () => {
    vi.useFakeTimers({ now: 0 });
    const fn = vi.fn();
    realClock.setTimeout(fn, MAX_TIMER_DELAY_MS + 5_000);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(5_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it("a step of the machine's clock (a suspended laptop, an NTP step) fires a due timer within a minute", () => {
    vi.useFakeTimers({ now: 0 });
    const fn = vi.fn();
    realClock.setTimeout(fn, 15 * 3_600_000); // tomorrow's 09:00 job, armed at 18:00
    // Node's timers run on the monotonic clock, which stands still while the machine sleeps and
    // ignores steps: the wall clock reads 08:30 on waking, the timer still has its 15 hours to go.
    vi.setSystemTime(14.5 * 3_600_000);
    vi.advanceTimersByTime(29 * 60_000);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(60_000);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(realClock.now()).toBeLessThanOrEqual(15 * 3_600_000 + 60_000);
  });

  it("a step back of the machine's clock does not hold a timer for the length of the step", () => {
    vi.useFakeTimers({ now: 10 * 3_600_000, toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
    const fn = vi.fn();
    realClock.setTimeout(fn, 10_000); // a retry's pause, say
    vi.advanceTimersByTime(5_000);
    // An NTP step sets the wall clock an hour back; the monotonic clock goes on.
    vi.setSystemTime(9 * 3_600_000 + 5_000);
    vi.advanceTimersByTime(4_999);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it("clearTimeout cancels a chained timer", () => {
    vi.useFakeTimers({ now: 0 });
    const fn = vi.fn();
    const handle = realClock.setTimeout(fn, MAX_TIMER_DELAY_MS * 2);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS + 1);
    realClock.clearTimeout(handle);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS * 2);
    expect(fn).not.toHaveBeenCalled();
    expect(realClock.now()).toBe(MAX_TIMER_DELAY_MS * 3 + 1);
  });
});
