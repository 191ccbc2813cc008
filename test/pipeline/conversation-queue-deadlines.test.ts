/**
 * Handler timeouts with one clock timer for all running tasks, and lazily made signals; a task's
 * calls waiting for the account's rate budget stop its timeout meanwhile.
 */
import { describe, expect, it } from "vitest";
import { budgetWait } from "../../src/api/budget-waits.ts";
import type { TaskControl } from "../../src/pipeline/conversation-queue.ts";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";
import { add, CountingClock, deferred, newQueue, recordingLogger } from "../support/pipeline.ts";

const never = () => new Promise<void>(() => {});
const timeoutLines = (log: ReturnType<typeof recordingLogger>) =>
  log.lines.filter((l) => l.msg === "handler timed out; its signal was aborted and the queue moved on");

describe("ConversationQueue timeouts with one timer", () => {
  it("does not count a task's wait for the rate budget: its deadline moves on by the wait", async () => {
    const clock = new ManualClock(0);
    const log = recordingLogger();
    const queue = newQueue({ concurrency: 2, handlerTimeoutMs: 1000, clock, log });
    const budget = deferred();
    let waited = false;
    void add(queue, "k", async (control) => {
      await budgetWait(budget.promise, control.signal);
      waited = true;
      await never();
    });
    void add(queue, "other", never); // due at 1000, with no wait
    await clock.tickTo(1000);
    expect(timeoutLines(log).map((l) => l.obj.conversation)).toEqual(["other"]);
    await clock.tickTo(3000);
    expect(timeoutLines(log)).toHaveLength(1);
    budget.resolve(); // waited 3 s: due at 4000
    await flushAsync();
    expect(waited).toBe(true);
    await clock.tickTo(3999);
    expect(timeoutLines(log)).toHaveLength(1);
    await clock.tickTo(4000);
    expect(timeoutLines(log).map((l) => l.obj.conversation)).toEqual(["other", "k"]);
    expect(queue.inFlight).toBe(0);
  });

  it("times out a slow task with one timer while later tasks come and go", async () => {
    const clock = new CountingClock(0);
    const log = recordingLogger();
    const queue = newQueue({ concurrency: 4, handlerTimeoutMs: 1000, clock, log });
    const slow = add(queue, "slow", never);
    let finished = 0;
    for (let round = 0; round < 5; round++) {
      const gates = [deferred(), deferred(), deferred()];
      for (const [i, gate] of gates.entries())
        queue.push(
          `k${i}`,
          () => gate.promise,
          undefined,
          () => finished++,
        );
      expect(clock.pendingTimers).toBe(1);
      for (const gate of gates) gate.resolve();
      await clock.tick(100);
    }
    expect(finished).toBe(15);
    expect([clock.pendingTimers, clock.armed]).toEqual([1, 1]);
    expect(timeoutLines(log)).toEqual([]);
    await clock.tickTo(1000);
    await slow;
    expect(timeoutLines(log).map((l) => l.obj)).toEqual([{ conversation: "slow", timeoutMs: 1000 }]);
    expect(clock.pendingTimers).toBe(0);
    expect(queue.inFlight).toBe(0);
  });

  it("re-arms for the next deadline: each task times out at its own start plus the timeout", async () => {
    const clock = new CountingClock(0);
    const log = recordingLogger();
    const queue = newQueue({ concurrency: 4, handlerTimeoutMs: 1000, clock, log });
    const early = deferred();
    queue.push("early", () => early.promise); // the timer is armed for it (due at 1000)...
    await clock.tick(400);
    queue.push("a", never); // due at 1400
    await clock.tick(200);
    queue.push("b", never); // due at 1600
    early.resolve(); // ...and it finishes early: the timer stays, fires for nothing, re-arms
    await flushAsync();
    expect(clock.pendingTimers).toBe(1);
    await clock.tickTo(1399);
    expect(timeoutLines(log)).toEqual([]);
    await clock.tickTo(1400);
    expect(timeoutLines(log).map((l) => l.obj.conversation)).toEqual(["a"]);
    expect(clock.pendingTimers).toBe(1);
    await clock.tickTo(1599);
    expect(timeoutLines(log).map((l) => l.obj.conversation)).toEqual(["a"]);
    await clock.tickTo(1600);
    expect(timeoutLines(log).map((l) => l.obj.conversation)).toEqual(["a", "b"]);
    expect(clock.pendingTimers).toBe(0);
    expect(clock.armed).toBe(3); // for "early", then re-armed at 1000 for "a" and at 1400 for "b"
    expect(queue.inFlight).toBe(0);
  });

  it("clears the timer as soon as the last running async task finished", async () => {
    const clock = new CountingClock(0);
    const queue = newQueue({ handlerTimeoutMs: 1000, clock });
    const gates = [deferred(), deferred()];
    for (const [i, gate] of gates.entries()) queue.push(`k${i}`, () => gate.promise);
    expect([clock.pendingTimers, clock.armed]).toEqual([1, 1]);
    gates[0]?.resolve();
    await flushAsync();
    expect(clock.pendingTimers).toBe(1); // k1 still runs
    gates[1]?.resolve();
    await flushAsync();
    expect([clock.pendingTimers, clock.armed, queue.inFlight]).toEqual([0, 1, 0]);
  });

  it("arms the timer once for a burst of async tasks waiting for a slot, and clears it when idle", async () => {
    const clock = new CountingClock(0);
    const queue = newQueue({ concurrency: 1, handlerTimeoutMs: 1000, clock });
    let finished = 0;
    for (let i = 0; i < 50; i++)
      queue.push(
        `k${i}`,
        async () => {},
        undefined,
        () => finished++,
      );
    await queue.onIdle();
    expect(finished).toBe(50);
    expect([clock.pendingTimers, clock.armed]).toEqual([0, 1]);
  });

  it("times out every task past its deadline at once and starts the waiting ones", async () => {
    const clock = new ManualClock(0);
    const log = recordingLogger();
    const queue = newQueue({ concurrency: 2, handlerTimeoutMs: 100, clock, log });
    const ran: string[] = [];
    queue.push("a", never);
    queue.push("b", never);
    queue.push("a", () => {
      ran.push("a2");
    });
    queue.push("c", () => {
      ran.push("c");
    });
    expect([queue.inFlight, ran]).toEqual([4, []]);
    await clock.tick(100);
    expect(timeoutLines(log).map((l) => l.obj.conversation)).toEqual(["a", "b"]);
    expect(ran).toEqual(["c", "a2"]); // c waited longer than a2 (ready when added)
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("ConversationQueue signals", () => {
  it("gives a task that never read its signal an aborted one after the timeout", async () => {
    const clock = new ManualClock(0);
    const queue = newQueue({ handlerTimeoutMs: 100, clock });
    let control!: TaskControl;
    queue.push("k", (c) => {
      control = c;
      return never();
    });
    await clock.tick(100);
    expect(control.signal.aborted).toBe(true);
    expect(control.signal.reason).toMatchObject({
      name: "RouterError",
      code: "ROUTER_HANDLER_TIMEOUT",
      message: "The handler for k ran longer than 100 ms.",
    });
    expect(control.signal).toBe(control.signal); // one signal, not a new one per read
  });

  it("abortAll aborts a signal read before it, and one read after it", async () => {
    const clock = new ManualClock(0);
    const queue = newQueue({ clock });
    let readEarly!: AbortSignal;
    let lazy!: TaskControl;
    const reasons: unknown[] = [];
    queue.push("a", ({ signal }) => {
      readEarly = signal;
      signal.addEventListener("abort", () => reasons.push(signal.reason));
      return never();
    });
    queue.push("b", (c) => {
      lazy = c;
      return never();
    });
    expect(readEarly.aborted).toBe(false);
    const reason = new Error("stop now");
    expect(queue.abortAll(reason)).toBe(0);
    expect(reasons).toEqual([reason]);
    expect(readEarly.reason).toBe(reason);
    expect(lazy.signal.aborted).toBe(true);
    expect(lazy.signal.reason).toBe(reason);
  });

  it("does not abort the signal of a task that finished, nor one still waiting", async () => {
    const clock = new ManualClock(0);
    const queue = newQueue({ concurrency: 1, clock });
    let finished!: TaskControl;
    queue.push("a", (c) => {
      finished = c;
    });
    const gate = deferred();
    queue.push("b", () => gate.promise);
    let later!: TaskControl;
    queue.push("c", (c) => {
      later = c;
    });
    expect(queue.abortAll()).toBe(1);
    expect(finished.signal.aborted).toBe(false);
    expect(later).toBeUndefined(); // dropped: never ran
    gate.resolve();
    await queue.onIdle();
  });
});
