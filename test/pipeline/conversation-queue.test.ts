import { describe, expect, it } from "vitest";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";
import { add, deferred, newQueue, recordingLogger } from "../support/pipeline.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ConversationQueue ordering and concurrency", () => {
  it("keeps per-key order under random delays while running keys in parallel", async () => {
    const concurrency = 4;
    const queue = newQueue({ concurrency });
    const keys = ["a", "b", "c", "d", "e", "f"];
    const perKey = new Map<string, number[]>(keys.map((k) => [k, []]));
    const runningKeys = new Set<string>();
    let running = 0;
    let maxRunning = 0;
    let overlaps = 0;
    const all: Promise<void>[] = [];
    for (let i = 0; i < 120; i++) {
      const key = keys[Math.floor(Math.random() * keys.length)] as string;
      all.push(
        add(queue, key, async () => {
          if (runningKeys.has(key)) overlaps++; // (an expect here would be swallowed by the queue)
          runningKeys.add(key);
          maxRunning = Math.max(maxRunning, ++running);
          await sleep(Math.random() * 3);
          perKey.get(key)?.push(i);
          running--;
          runningKeys.delete(key);
        }),
      );
    }
    await Promise.all(all);
    expect(overlaps).toBe(0); // never two tasks of one key at once
    for (const order of perKey.values()) expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(maxRunning).toBeGreaterThan(1);
    expect(maxRunning).toBeLessThanOrEqual(concurrency);
    expect(queue.inFlight).toBe(0);
  });

  it("runs exactly `concurrency` tasks at once when more keys are ready", async () => {
    const queue = newQueue({ concurrency: 3 });
    const gate = deferred();
    let started = 0;
    for (let i = 0; i < 10; i++) {
      add(queue, `k${i}`, async () => {
        started++;
        await gate.promise;
      });
    }
    await flushAsync();
    expect(started).toBe(3);
    expect(queue.inFlight).toBe(10);
    gate.resolve();
    await queue.onIdle();
    expect(started).toBe(10);
  });

  it("gives a freed slot to the key that waited longest, so a busy key cannot starve others", async () => {
    const queue = newQueue({ concurrency: 1 });
    const order: string[] = [];
    const task = (label: string) => () => {
      order.push(label);
    };
    const gate = deferred();
    // busy1 holds the only slot (a synchronous task would finish inside add()), so the rest queue up.
    add(queue, "busy", () => {
      order.push("busy1");
      return gate.promise;
    });
    add(queue, "busy", task("busy2"));
    add(queue, "busy", task("busy3"));
    add(queue, "quiet", task("quiet1"));
    expect(order).toEqual(["busy1"]);
    gate.resolve();
    await queue.onIdle();
    expect(order).toEqual(["busy1", "quiet1", "busy2", "busy3"]);
  });
});

describe("ConversationQueue failures and timeouts", () => {
  it("logs a thrown error with its key and keeps going", async () => {
    const log = recordingLogger();
    const queue = newQueue({ log });
    const ran: number[] = [];
    add(queue, "k", async () => {
      throw new Error("async boom");
    });
    add(queue, "k", () => {
      throw new Error("sync boom");
    });
    add(queue, "k", () => {
      ran.push(3);
    });
    await queue.onIdle();
    expect(log.lines.map((l) => [l.obj.conversation, (l.obj.err as Error).message, l.msg])).toEqual([
      ["k", "async boom", "handler failed"],
      ["k", "sync boom", "handler failed"],
    ]);
    expect(ran).toEqual([3]);
  });

  it("logs errors by default", async () => {
    const log = recordingLogger();
    const queue = newQueue({ log });
    const err = new Error("boom");
    await add(queue, "stream:5:x", () => Promise.reject(err));
    expect(log.lines).toEqual([
      { level: "error", obj: { err, conversation: "stream:5:x" }, msg: "handler failed" },
    ]);
  });

  it("aborts a slow task's signal at the timeout and moves on to the key's next task", async () => {
    const clock = new ManualClock(0);
    const log = recordingLogger();
    const queue = newQueue({ handlerTimeoutMs: 1000, clock, log });
    let reason: unknown;
    let secondStarted = false;
    const stuck = deferred();
    add(queue, "k", async ({ signal }) => {
      signal.addEventListener("abort", () => {
        reason = signal.reason;
      });
      await stuck.promise; // ignores the signal on purpose
      throw new Error("late failure");
    });
    add(queue, "k", () => {
      secondStarted = true;
    });
    await clock.tick(999);
    expect(reason).toBeUndefined();
    expect(secondStarted).toBe(false);
    await clock.tick(1);
    expect(reason).toMatchObject({
      name: "RouterError",
      code: "ROUTER_HANDLER_TIMEOUT",
      message: "The handler for k ran longer than 1000 ms.",
    });
    await queue.onIdle();
    expect(secondStarted).toBe(true);
    stuck.resolve();
    await flushAsync();
    expect(log.lines.map((l) => [l.level, l.msg])).toEqual([
      ["warn", "handler timed out; its signal was aborted and the queue moved on"],
      ["warn", "handler failed after it had timed out"],
    ]);
    expect(log.lines[0]?.obj).toEqual({ conversation: "k", timeoutMs: 1000 });
  });

  it("clears the timeout of a task that finished in time", async () => {
    const clock = new ManualClock(0);
    const queue = newQueue({ handlerTimeoutMs: 1000, clock });
    await add(queue, "k", () => {});
    expect(clock.pendingTimers).toBe(0);
  });

  it("abortAll drops waiting tasks and aborts running ones", async () => {
    const queue = newQueue({ concurrency: 1 });
    let reason: unknown;
    const ran: string[] = [];
    add(
      queue,
      "a",
      ({ signal }) =>
        new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            resolve();
          }),
        ),
    );
    const dropped = add(queue, "b", () => {
      ran.push("b");
    });
    await flushAsync();
    expect(queue.abortAll()).toBe(1);
    await dropped;
    await queue.onIdle();
    expect(ran).toEqual([]);
    expect(reason).toMatchObject({ code: "ROUTER_ABORTED", message: "The bot is shutting down." });
  });
});

describe("ConversationQueue backpressure and idleness", () => {
  it("onBelow waits until fewer than `limit` tasks are in flight", async () => {
    const queue = newQueue({ concurrency: 2 });
    const gates = [deferred(), deferred(), deferred()];
    for (const [i, gate] of gates.entries()) add(queue, `k${i}`, () => gate.promise);
    let resolved = false;
    const below = queue.onBelow(2).then(() => {
      resolved = true;
    });
    await flushAsync();
    expect(resolved).toBe(false);
    gates[0]?.resolve();
    await flushAsync();
    expect(resolved).toBe(false); // 2 still in flight
    gates[1]?.resolve();
    await below;
    expect(queue.inFlight).toBe(1);
    await expect(queue.onBelow(5)).resolves.toBeUndefined();
    gates[2]?.resolve();
  });

  it("onBelow rejects with the signal's reason when aborted", async () => {
    const queue = newQueue();
    const gate = deferred();
    add(queue, "k", () => gate.promise);
    const controller = new AbortController();
    const waiting = queue.onBelow(1, controller.signal);
    controller.abort(new Error("stopping"));
    await expect(waiting).rejects.toThrow("stopping");
    await expect(queue.onBelow(1, controller.signal)).rejects.toThrow("stopping");
    gate.resolve();
    await queue.onIdle();
  });

  it("onIdle resolves at once when empty, else after the last task", async () => {
    const queue = newQueue();
    await queue.onIdle();
    const order: string[] = [];
    add(queue, "a", async () => {
      await sleep(1);
      order.push("a");
    });
    add(queue, "a", () => {
      order.push("a2");
    });
    await queue.onIdle();
    order.push("idle");
    expect(order).toEqual(["a", "a2", "idle"]);
  });

  it("rejects bad options and limits", () => {
    expect(() => newQueue({ concurrency: 0 })).toThrow("concurrency must be a positive integer, got 0.");
    expect(() => newQueue({ handlerTimeoutMs: 1.5 })).toThrow(
      "handlerTimeoutMs must be a positive integer, got 1.5.",
    );
    const queue = newQueue();
    expect(() => queue.onBelow(0)).toThrow("onBelow limit must be a positive integer, got 0.");
  });
});
