/**
 * TaskControl.holdKey: the key stays closed until the hold settles; the slot is free at once.
 * TaskControl.resumeAfter: the same, then a task of its own runs first on the key.
 * TaskControl.end: the task is over before its promise settles (a run parked at a prompt).
 */
import { describe, expect, it } from "vitest";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";
import { add, deferred, newQueue, recordingLogger } from "../support/pipeline.ts";

describe("ConversationQueue holdKey", () => {
  it("starts the key's next task only after the hold settles, but frees the slot for other keys", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    const hold = deferred();
    const started: string[] = [];
    let firstDone = false;
    const first = add(queue, "k", (control) => {
      started.push("k1");
      control.holdKey(hold.promise);
    }).then(() => {
      firstDone = true;
    });
    void add(queue, "k", () => {
      started.push("k2");
    });
    void add(queue, "other", () => {
      started.push("other");
    });
    await flushAsync();
    expect(started).toEqual(["k1", "other"]);
    expect(queue.inFlight).toBe(2); // k1 held, k2 waiting
    expect(firstDone).toBe(false);
    hold.resolve();
    await first;
    await flushAsync();
    expect(started).toEqual(["k1", "other", "k2"]);
    await queue.onIdle();
    expect(queue.inFlight).toBe(0);
  });

  it("onIdle waits for a hold, and a rejected hold releases the key too", async () => {
    const queue = newQueue({ concurrency: 2, clock: new ManualClock(0) });
    let reject!: (err: Error) => void;
    const failing = new Promise<void>((_r, j) => {
      reject = j;
    });
    let idle = false;
    void add(queue, "k", (control) => control.holdKey(failing));
    const ran: string[] = [];
    void add(queue, "k", () => {
      ran.push("next");
    });
    void queue.onIdle().then(() => {
      idle = true;
    });
    await flushAsync();
    expect(idle).toBe(false);
    expect(ran).toEqual([]);
    reject(new Error("flush failed"));
    await queue.onIdle();
    expect(ran).toEqual(["next"]);
    expect(idle).toBe(true);
  });

  it("drops a hold when the task times out: the key moves on as for any timeout", async () => {
    const clock = new ManualClock(0);
    const queue = newQueue({ concurrency: 1, handlerTimeoutMs: 100, clock });
    const never = new Promise<void>(() => {});
    const ran: string[] = [];
    void add(queue, "k", (control) => {
      control.holdKey(never);
      return never;
    });
    void add(queue, "k", () => {
      ran.push("next");
    });
    await flushAsync();
    expect(ran).toEqual([]);
    await clock.tick(100);
    await queue.onIdle();
    expect(ran).toEqual(["next"]);
  });

  it("releases every task holding the same promise when it settles, and no other", async () => {
    const queue = newQueue({ concurrency: 2, clock: new ManualClock(0) });
    const p1 = deferred();
    const p2 = deferred();
    const ran: string[] = [];
    const holds: Record<string, Promise<void>> = {
      a: p1.promise,
      b: p1.promise,
      c: p2.promise,
      d: p1.promise,
    };
    for (const key of ["a", "b", "c", "d"]) {
      queue.push(key, (control) => control.holdKey(holds[key] as Promise<void>));
      queue.push(key, () => {
        ran.push(key);
      });
    }
    await flushAsync();
    expect(ran).toEqual([]);
    p1.resolve();
    await flushAsync();
    expect(ran).toEqual(["a", "b", "d"]);
    p2.resolve();
    await queue.onIdle();
    expect(ran).toEqual(["a", "b", "d", "c"]);
  });

  it("a held task is never timed out, and abortAll aborts its signal (the work it holds for stops)", async () => {
    const clock = new ManualClock(0);
    const queue = newQueue({ concurrency: 1, handlerTimeoutMs: 100, clock });
    const hold = deferred();
    const signals: AbortSignal[] = [];
    for (const key of ["a", "b"]) {
      queue.push(key, (control) => {
        signals.push(control.signal);
        control.holdKey(hold.promise);
      });
    }
    const ran: string[] = [];
    queue.push("b", () => {
      ran.push("next");
    });
    await clock.tick(1_000);
    expect(signals.map((s) => s.aborted)).toEqual([false, false]);
    expect(queue.inFlight).toBe(3);
    expect(queue.abortAll()).toBe(1);
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    hold.resolve();
    await queue.onIdle();
    expect(ran).toEqual([]);
  });

  it("resumeAfter: the slot is free while it waits; then its task runs first on the key, with a timeout of its own", async () => {
    const clock = new ManualClock(0);
    const queue = newQueue({ concurrency: 1, handlerTimeoutMs: 100, clock });
    const wait = deferred();
    const ran: string[] = [];
    let resumed: AbortSignal | undefined;
    const first = add(queue, "k", (control) => {
      ran.push("k1");
      expect(
        control.resumeAfter(wait.promise, (c) => {
          ran.push("k1 again");
          resumed = c.signal;
          return new Promise<void>(() => {});
        }),
      ).toBe(true);
    });
    void add(queue, "k", () => {
      ran.push("k2");
    });
    void add(queue, "other", () => {
      ran.push("other");
    });
    // Past any timeout: a waiting task is not timed out, and holds no slot.
    await clock.tick(1_000);
    expect(ran).toEqual(["k1", "other"]);
    let done = false;
    void first.then(() => {
      done = true;
    });
    wait.resolve();
    await flushAsync();
    expect(ran).toEqual(["k1", "other", "k1 again"]);
    expect(done).toBe(false);
    await clock.tick(100);
    expect(resumed?.aborted).toBe(true);
    await queue.onIdle();
    expect(ran).toEqual(["k1", "other", "k1 again", "k2"]);
    expect(done).toBe(true);
  });

  it("resumeAfter: abortAll drops its task; a task that timed out cannot resume", async () => {
    const clock = new ManualClock(0);
    const queue = newQueue({ concurrency: 1, handlerTimeoutMs: 100, clock });
    const wait = deferred();
    const ran: string[] = [];
    const finished = add(queue, "k", (control) => {
      control.resumeAfter(wait.promise, () => {
        ran.push("again");
      });
    });
    queue.abortAll();
    wait.resolve();
    await finished;
    await queue.onIdle();
    expect(ran).toEqual([]);
    let late: boolean | undefined;
    void add(queue, "t", async (control) => {
      await new Promise<void>((resolve) => control.signal.addEventListener("abort", () => resolve()));
      late = control.resumeAfter(Promise.resolve(), () => {
        ran.push("late");
      });
    });
    await clock.tick(100);
    await queue.onIdle();
    await flushAsync();
    expect(late).toBe(false);
    expect(ran).toEqual([]);
  });

  it("end: a task whose promise never settles is over when it ends; its holds keep the key, its timeout goes", async () => {
    const clock = new ManualClock(0);
    const log = recordingLogger();
    const queue = newQueue({ concurrency: 1, handlerTimeoutMs: 100, clock, log });
    const hold = deferred();
    const ran: string[] = [];
    let ended = false;
    const parked = add(queue, "k", async (control) => {
      ran.push("k1");
      await Promise.resolve();
      control.holdKey(hold.promise);
      control.end();
      return new Promise(() => {}); // as a parked handler: never settles
    }).then(() => {
      ended = true;
    });
    void add(queue, "k", () => {
      ran.push("k2");
    });
    void add(queue, "other", () => {
      ran.push("other");
    });
    await flushAsync();
    // Its slot is free (another key ran), its key held.
    expect(ran).toEqual(["k1", "other"]);
    expect(ended).toBe(false);
    hold.resolve();
    await parked;
    await queue.onIdle();
    expect(ran).toEqual(["k1", "other", "k2"]);
    // No timeout fires for it later: nothing is timed any more.
    await clock.tick(1_000);
    expect(log.lines.map((l) => l.msg)).toEqual([]);
    expect(queue.inFlight).toBe(0);
  });

  it("end: called before the task's call returned (inline, or as it starts), the task is over when it returns", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    const ran: string[] = [];
    // Inline: an idle key with a free slot runs its task inside push().
    const inline = add(queue, "a", (control) => {
      ran.push("a1");
      control.end();
      return new Promise(() => {});
    });
    void add(queue, "a", () => {
      ran.push("a2");
    });
    await inline;
    await queue.onIdle();
    // Started by the pump (its key had a line): the same.
    const gate = deferred();
    void add(queue, "b", () => gate.promise);
    const pumped = add(queue, "b", (control) => {
      ran.push("b2");
      control.end();
      return new Promise(() => {});
    });
    void add(queue, "b", () => {
      ran.push("b3");
    });
    gate.resolve();
    await pumped;
    await queue.onIdle();
    expect(ran).toEqual(["a1", "a2", "b2", "b3"]);
  });
});
