/** The synchronous fast path: a task that returns a non-thenable finishes inside push()/add(). */
import { describe, expect, it } from "vitest";
import type { TaskControl } from "../../src/pipeline/conversation-queue.ts";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";
import { add, CountingClock, deferred, newQueue, recordingLogger } from "../support/pipeline.ts";

/** Frames on the stack right now (to show that a long run of tasks does not nest). */
function stackDepth(): number {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = Number.POSITIVE_INFINITY;
  const depth = (new Error().stack ?? "").split("\n").length;
  Error.stackTraceLimit = limit;
  return depth;
}

describe("ConversationQueue synchronous tasks", () => {
  it("runs a sync task inside push() and finishes it before push() returns", () => {
    const queue = newQueue({ clock: new ManualClock(0) });
    const seen: string[] = [];
    queue.push(
      "k",
      () => {
        seen.push(`running, ${queue.inFlight} in flight`);
      },
      undefined,
      () => seen.push("done"),
    );
    seen.push("push returned");
    expect(seen).toEqual(["running, 1 in flight", "done", "push returned"]);
    expect(queue.inFlight).toBe(0);
  });

  it("logs a sync throw with the key before push() returns, and moves on", () => {
    const log = recordingLogger();
    const queue = newQueue({ clock: new ManualClock(0), log });
    const err = new Error("sync boom");
    let done = 0;
    queue.push(
      "k",
      () => {
        throw err;
      },
      undefined,
      () => done++,
    );
    expect(log.lines).toEqual([{ level: "error", obj: { err, conversation: "k" }, msg: "handler failed" }]);
    expect(done).toBe(1);
    expect(queue.inFlight).toBe(0);
  });

  it("arms no clock timer for sync tasks, so passing the timeout logs nothing", async () => {
    const clock = new CountingClock(0);
    const log = recordingLogger();
    const queue = newQueue({ handlerTimeoutMs: 100, clock, log });
    const timersSeen: number[] = [];
    for (let i = 0; i < 10; i++) queue.push(`k${i % 3}`, () => timersSeen.push(clock.pendingTimers));
    await add(queue, "k0", () => timersSeen.push(clock.pendingTimers));
    expect(timersSeen).toEqual(Array(11).fill(0));
    expect([clock.pendingTimers, clock.armed]).toEqual([0, 0]);
    await clock.tick(1000);
    expect(log.lines).toEqual([]);
  });

  it("awaits a thenable that is not a Promise", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    let settle!: () => void;
    const order: string[] = [];
    queue.push("a", () => ({
      // biome-ignore lint/suspicious/noThenProperty: the point of the test is a hand-made thenable
      then(onFulfilled: () => void) {
        settle = onFulfilled;
      },
    }));
    queue.push("b", () => {
      order.push("b");
    });
    expect([queue.inFlight, order]).toEqual([2, []]);
    settle();
    expect(order).toEqual(["b"]);
    await queue.onIdle();
  });

  it("runs 100,000 sync tasks of one key in order without growing the stack", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    const gate = deferred();
    queue.push("other", () => gate.promise); // holds the only slot while the rest queue up
    const n = 100_000;
    let next = 0;
    let outOfOrder = 0;
    const depths: number[] = [];
    for (let i = 0; i < n; i++) {
      queue.push("k", () => {
        if (i !== next++) outOfOrder++;
        if (i === 0 || i === n - 1) depths.push(stackDepth());
      });
    }
    expect(queue.inFlight).toBe(n + 1);
    gate.resolve();
    await queue.onIdle();
    expect([next, outOfOrder]).toEqual([n, 0]);
    expect(depths[1]).toBe(depths[0]);
  });

  it("runs 100,000 sync tasks released one after another by a finishing async task", async () => {
    const queue = newQueue({ concurrency: 2, clock: new ManualClock(0) });
    const gate = deferred();
    queue.push("k", () => gate.promise);
    const n = 100_000;
    const depths: number[] = [];
    let ran = 0;
    for (let i = 0; i < n; i++) {
      queue.push("k", () => {
        ran++;
        if (i === 0 || i === n - 1) depths.push(stackDepth());
      });
    }
    gate.resolve();
    await queue.onIdle();
    expect(ran).toBe(n);
    expect(depths[1]).toBe(depths[0]);
  });
});

describe("ConversationQueue re-entrant push", () => {
  it("keeps per-key order and the concurrency limit when a task pushes more tasks", () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    const log: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const task = (label: string, body?: () => void) => () => {
      maxRunning = Math.max(maxRunning, ++running);
      log.push(`${label} start`);
      body?.();
      log.push(`${label} end`);
      running--;
    };
    queue.push(
      "k",
      task("k1", () => {
        queue.push("k", task("k2"));
        queue.push("other", task("o1"));
        queue.push("k", task("k3"));
      }),
    );
    expect(log).toEqual([
      "k1 start",
      "k1 end",
      "o1 start",
      "o1 end",
      "k2 start",
      "k2 end",
      "k3 start",
      "k3 end",
    ]);
    expect(maxRunning).toBe(1);
    expect(queue.inFlight).toBe(0);
  });

  it("makes a task that ran alone and turned async the head of its key, ahead of what it pushed", async () => {
    const queue = newQueue({ concurrency: 2, clock: new ManualClock(0) });
    const gate = deferred();
    const log: string[] = [];
    queue.push("k", () => {
      log.push("k1 start");
      queue.push("k", () => log.push("k2"));
      queue.push("other", () => log.push("o1"));
      return gate.promise.then(() => log.push("k1 end"));
    });
    expect(queue.inFlight).toBe(2); // k1 running, k2 waiting
    await flushAsync();
    // The other key had a free slot; k2 waits for k1 although it was queued first.
    expect(log).toEqual(["k1 start", "o1"]);
    gate.resolve();
    await flushAsync();
    expect(log).toEqual(["k1 start", "o1", "k1 end", "k2"]);
    expect(queue.inFlight).toBe(0);
  });

  it("keeps order when onDone pushes the key's next task", () => {
    const queue = newQueue({ clock: new ManualClock(0) });
    const order: number[] = [];
    const pushFrom = (i: number): void =>
      queue.push(
        "k",
        () => order.push(i),
        undefined,
        () => {
          if (i < 5) pushFrom(i + 1);
        },
      );
    pushFrom(1);
    queue.push("k", () => order.push(99));
    expect(order).toEqual([1, 2, 3, 4, 5, 99]);
  });

  it("lets a task abort everything: its own signal, read later, is aborted and the rest dropped", () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    let control!: TaskControl;
    let dropped = -1;
    const done: string[] = [];
    queue.push("k", (c) => {
      control = c;
      queue.push(
        "k",
        () => done.push("ran k2"),
        undefined,
        () => done.push("k2 done"),
      );
      queue.push(
        "x",
        () => done.push("ran x"),
        undefined,
        () => done.push("x done"),
      );
      dropped = queue.abortAll();
    });
    expect(dropped).toBe(2);
    expect(done).toEqual(["k2 done", "x done"]);
    expect(control.signal.aborted).toBe(true);
    expect(control.signal.reason).toMatchObject({ code: "ROUTER_ABORTED" });
    expect(queue.inFlight).toBe(0);
  });
});

describe("ConversationQueue push() onDone", () => {
  it("is called after a held key is released, and for tasks dropped by abortAll", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    const hold = deferred();
    const done: string[] = [];
    queue.push(
      "k",
      (c) => c.holdKey(hold.promise),
      undefined,
      () => done.push("k1"),
    );
    queue.push(
      "x",
      () => new Promise(() => {}),
      undefined,
      () => done.push("x"),
    );
    queue.push(
      "y",
      () => {},
      undefined,
      () => done.push("y"),
    );
    expect(done).toEqual([]);
    hold.resolve();
    await flushAsync();
    expect(done).toEqual(["k1"]);
    expect(queue.abortAll()).toBe(1);
    expect(done).toEqual(["k1", "y"]);
  });
});
