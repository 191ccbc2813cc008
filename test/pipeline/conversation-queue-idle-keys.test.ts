/** push's argument, and keys that ran out of tasks (kept idle, then dropped in bulk). */
import { describe, expect, it } from "vitest";
import type { TaskControl } from "../../src/pipeline/conversation-queue.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { deferred, newQueue } from "../support/pipeline.ts";

describe("ConversationQueue.push", () => {
  it("hands each task its own argument through one shared function", () => {
    const queue = newQueue({ clock: new ManualClock(0) });
    const seen: string[] = [];
    const task = (_control: TaskControl, arg: { n: number }) => {
      seen.push(`task ${arg.n}`);
    };
    queue.push("a", task, { n: 1 });
    queue.push("a", task, { n: 2 }, () => seen.push("done 2"));
    expect(seen).toEqual(["task 1", "task 2", "done 2"]);
  });
});

describe("ConversationQueue idle keys", () => {
  it("keeps order on keys that went idle, before and after idle keys are dropped in bulk", async () => {
    const queue = newQueue({ concurrency: 4, clock: new ManualClock(0) });
    // 10,000 keys each run a task and go idle: more than the queue keeps before dropping them.
    for (let round = 0; round < 2; round++) {
      for (let k = 0; k < 10_000; k++) queue.push(`k${k}`, () => {});
    }
    expect(queue.inFlight).toBe(0);
    // On an old key, a second task still waits for the first to settle.
    const order: string[] = [];
    const gate = deferred();
    for (const key of ["k1", "k9999", "new"]) {
      queue.push(key, async () => {
        order.push(`${key} first starts`);
        await gate.promise;
        order.push(`${key} first ends`);
      });
    }
    // More keys go idle while those run: the bulk drop must leave the busy keys alone.
    for (let k = 10_000; k < 20_000; k++) queue.push(`k${k}`, () => {});
    for (const key of ["k1", "k9999", "new"]) {
      queue.push(key, () => {
        order.push(`${key} second`);
      });
    }
    expect(queue.inFlight).toBe(6);
    expect(order).toEqual(["k1 first starts", "k9999 first starts", "new first starts"]);
    gate.resolve();
    await queue.onIdle();
    for (const key of ["k1", "k9999", "new"]) {
      expect(order.indexOf(`${key} second`)).toBeGreaterThan(order.indexOf(`${key} first ends`));
    }
  });

  it("abortAll drops the waiting tasks of every key, idle keys alongside", async () => {
    const queue = newQueue({ concurrency: 1, clock: new ManualClock(0) });
    for (let k = 0; k < 100; k++) queue.push(`idle${k}`, () => {});
    const gate = deferred();
    queue.push("busy", () => gate.promise);
    let dropped = 0;
    queue.push(
      "busy",
      () => {},
      undefined,
      () => dropped++,
    );
    queue.push(
      "other",
      () => {},
      undefined,
      () => dropped++,
    );
    expect(queue.abortAll()).toBe(2);
    expect(dropped).toBe(2);
    gate.resolve();
    await queue.onIdle();
    queue.push("idle5", () => {});
    expect(queue.inFlight).toBe(0);
  });
});
