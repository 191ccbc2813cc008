/**
 * RUNS_ON: a task that goes on after its call and says when it is over (`end()`), as a handler's
 * run does; its queue makes no promise reaction for it. `endAfter`: the end once a promise settles.
 */
import { describe, expect, it } from "vitest";
import { endAfter, RUNS_ON, type TaskControl } from "../../src/pipeline/conversation-queue.ts";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";
import { add, deferred, newQueue, recordingLogger } from "../support/pipeline.ts";

describe("ConversationQueue RUNS_ON", () => {
  it("keeps the task's slot and key until it ends, inline or started by the pump", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    const ran: string[] = [];
    const controls: TaskControl[] = [];
    const runsOn = (name: string) => (control: TaskControl) => {
      ran.push(name);
      controls.push(control);
      return RUNS_ON;
    };
    const first = add(queue, "a", runsOn("a1")); // inline: the key idle, a slot free
    void add(queue, "a", runsOn("a2")); // started by the pump
    void add(queue, "b", () => {
      ran.push("b1");
    });
    await flushAsync();
    expect(ran).toEqual(["a1"]);
    expect(queue.inFlight).toBe(3);
    controls[0]?.end();
    await first;
    await flushAsync();
    // The slot went to the key that waited longest, then to a's next task, which holds it.
    expect(ran).toEqual(["a1", "b1", "a2"]);
    expect(queue.inFlight).toBe(1);
    controls[1]?.end();
    await queue.onIdle();
  });

  it("a promise of RUNS_ON goes on too; end() before the promise settles ends it", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    const gate = deferred();
    let control: TaskControl | undefined;
    let done = false;
    const task = add(queue, "a", (c) => {
      control = c;
      return gate.promise.then(() => RUNS_ON);
    }).then(() => {
      done = true;
    });
    gate.resolve();
    await flushAsync();
    expect(done).toBe(false); // resolved with RUNS_ON: not over
    control?.end();
    await task;
    expect(queue.inFlight).toBe(0);

    // Ended first, then resolved: over at the end, the resolution changes nothing.
    let settle = (_: symbol) => {};
    const late = new Promise<symbol>((resolve) => {
      settle = resolve;
    });
    const second = add(queue, "a", (c) => {
      queueMicrotask(() => c.end());
      return late;
    });
    await second;
    settle(RUNS_ON);
    await flushAsync();
    expect(queue.inFlight).toBe(0);
  });

  it("a task that never ends times out: its signal aborts and the queue moves on", async () => {
    const clock = new ManualClock(0);
    const log = recordingLogger();
    const queue = newQueue({ concurrency: 1, handlerTimeoutMs: 100, clock, log });
    let signal: AbortSignal | undefined;
    void add(queue, "a", (control) => {
      signal = control.signal;
      return RUNS_ON;
    });
    const next = add(queue, "a", () => {});
    await clock.tick(99);
    expect(signal?.aborted).toBe(false);
    await clock.tick(1);
    await next;
    expect(signal?.aborted).toBe(true);
    expect(log.lines.map((l) => l.msg)).toEqual([
      "handler timed out; its signal was aborted and the queue moved on",
    ]);
  });

  it("endAfter ends the task once the promise settles, and logs what it rejects with", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    const log = recordingLogger();
    let fail = (_: Error) => {};
    const work = new Promise<void>((_, reject) => {
      fail = reject;
    });
    let over = false;
    const task = add(queue, "a", (control) => {
      endAfter(control, work, { log });
      return RUNS_ON;
    }).then(() => {
      over = true;
    });
    await flushAsync();
    expect(over).toBe(false);
    fail(new Error("boom"));
    await task;
    expect(log.lines).toMatchObject([
      { level: "error", msg: "handler failed", obj: { err: { message: "boom" } } },
    ]);
    // Not a promise: over at once.
    await add(queue, "a", (control) => {
      endAfter(control, undefined, { log });
      return RUNS_ON;
    });
    expect(queue.inFlight).toBe(0);
  });
});
