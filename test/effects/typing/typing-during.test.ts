import { describe, expect, it } from "vitest";
import { type SetTyping, typingDuring } from "../../../src/effects/typing/typing-helper.ts";
import { ManualClock } from "../../support/manual-clock.ts";

function fakeTyping(clock: ManualClock, latencyMs = 0, honourAbort = true) {
  const t0 = clock.now();
  const ops: string[] = [];
  const setTyping: SetTyping = (op, signal) => {
    ops.push(`${op}@${clock.now() - t0}`);
    if (latencyMs === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const handle = clock.setTimeout(resolve, latencyMs);
      if (!honourAbort) return;
      signal?.addEventListener("abort", () => {
        clock.clearTimeout(handle);
        reject(signal.reason);
      });
    });
  };
  return { ops, setTyping };
}

const workFor =
  (clock: ManualClock, ms: number, value = "done") =>
  () =>
    new Promise<string>((resolve) => clock.setTimeout(() => resolve(value), ms));

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

describe("typingDuring", () => {
  it("work lasting 0 s: start then stop", async () => {
    const clock = new ManualClock(1_000_000);
    const { ops, setTyping } = fakeTyping(clock);
    const result = await typingDuring(setTyping, async () => "instant", { clock, startedWaitMs: 30_000 });
    expect(result).toBe("instant");
    expect(ops).toEqual(["start@0", "stop@0"]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("work lasting 25 s: one start, stop at the end", async () => {
    const clock = new ManualClock(1_000_000);
    const { ops, setTyping } = fakeTyping(clock);
    const done = settle(typingDuring(setTyping, workFor(clock, 25_000), { clock, startedWaitMs: 30_000 }));
    await clock.tick(100_000);
    expect(await done).toEqual({ value: "done" });
    expect(ops).toEqual(["start@0", "stop@25000"]);
  });

  it("work lasting 65 s: start repeated every 30 s, then stop", async () => {
    const clock = new ManualClock(1_000_000);
    const { ops, setTyping } = fakeTyping(clock);
    const done = settle(typingDuring(setTyping, workFor(clock, 65_000), { clock, startedWaitMs: 30_000 }));
    await clock.tick(100_000);
    expect(await done).toEqual({ value: "done" });
    expect(ops).toEqual(["start@0", "start@30000", "start@60000", "stop@65000"]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("uses the pre-FL 204 interval when told to (10 s)", async () => {
    const clock = new ManualClock(0);
    const { ops, setTyping } = fakeTyping(clock);
    const done = settle(typingDuring(setTyping, workFor(clock, 25_000), { clock, startedWaitMs: 10_000 }));
    await clock.tick(30_000);
    await done;
    expect(ops).toEqual(["start@0", "start@10000", "start@20000", "stop@25000"]);
  });

  it("sends stop when the work throws, and rethrows the work's error", async () => {
    const clock = new ManualClock(0);
    const { ops, setTyping } = fakeTyping(clock);
    const boom = new Error("lookup failed");
    const fn = () => new Promise<string>((_, reject) => clock.setTimeout(() => reject(boom), 10_000));
    const done = settle(typingDuring(setTyping, fn, { clock }));
    await clock.tick(60_000);
    expect(await done).toEqual({ error: boom });
    expect(ops).toEqual(["start@0", "stop@10000"]);
  });

  it("sends no start and no stop when cancelled before it begins, and does not run the work", async () => {
    const clock = new ManualClock(0);
    const { ops, setTyping } = fakeTyping(clock);
    const controller = new AbortController();
    const reason = new Error("shutting down");
    controller.abort(reason);
    let ran = false;
    const done = await settle(
      typingDuring(
        setTyping,
        async () => {
          ran = true;
        },
        { clock, signal: controller.signal },
      ),
    );
    expect(done).toEqual({ error: reason });
    expect(ran).toBe(false);
    expect(ops).toEqual([]);
  });

  it("cancelling mid-work reaches the work's signal and still sends stop", async () => {
    const clock = new ManualClock(0);
    const { ops, setTyping } = fakeTyping(clock);
    const controller = new AbortController();
    const fn = (signal: AbortSignal) =>
      new Promise<string>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    const done = settle(typingDuring(setTyping, fn, { clock, signal: controller.signal }));
    await clock.tick(40_000);
    const reason = new Error("cancelled by user");
    controller.abort(reason);
    expect(await done).toEqual({ error: reason });
    expect(ops).toEqual(["start@0", "start@30000", "stop@40000"]);
  });

  it("waits for a start still in flight (aborting it) before sending stop", async () => {
    const clock = new ManualClock(0);
    const { ops, setTyping } = fakeTyping(clock, 5_000);
    const errors: string[] = [];
    const done = settle(
      typingDuring(setTyping, workFor(clock, 1_000), {
        clock,
        onError: (error, op) => errors.push(`${op}: ${(error as Error).message}`),
      }),
    );
    await clock.tick(1_000);
    await clock.tick(5_000); // the stop request's own latency
    expect(await done).toEqual({ value: "done" });
    expect(ops).toEqual(["start@0", "stop@1000"]);
    expect(errors).toEqual(["start: The work is done; typing is no longer needed."]);
  });

  it("never lets stop overtake a start that ignores the abort: stop goes out after it lands", async () => {
    const clock = new ManualClock(0);
    const { ops, setTyping } = fakeTyping(clock, 5_000, false);
    const done = settle(typingDuring(setTyping, workFor(clock, 1_000), { clock }));
    await clock.tick(20_000);
    expect(await done).toEqual({ value: "done" });
    expect(ops).toEqual(["start@0", "stop@5000"]);
  });

  it("a failing typing request never fails the work; it goes to onError", async () => {
    const clock = new ManualClock(0);
    const calls: string[] = [];
    const setTyping: SetTyping = async (op) => {
      calls.push(op);
      throw new Error(`429 on ${op}`);
    };
    const errors: string[] = [];
    const done = settle(
      typingDuring(setTyping, workFor(clock, 35_000, "still fine"), {
        clock,
        onError: (error, op) => {
          errors.push(`${op}: ${(error as Error).message}`);
          throw new Error("a broken hook is ignored too");
        },
      }),
    );
    await clock.tick(40_000);
    expect(await done).toEqual({ value: "still fine" });
    expect(calls).toEqual(["start", "start", "stop"]);
    expect(errors).toEqual(["start: 429 on start", "start: 429 on start", "stop: 429 on stop"]);
  });
});
