/** ConversationQueue.onBelow on a signal that outlives many waits (a bot's stop signal). */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { add, deferred, newQueue } from "../support/pipeline.ts";

describe("backpressure waits on a long-lived signal", () => {
  it("take their abort listener off once they resolve: 50 waits leave none", async () => {
    const queue = newQueue({ concurrency: 1 });
    const stop = new AbortController();
    for (let i = 0; i < 50; i++) {
      const gate = deferred();
      const done = add(queue, `k${i}`, () => gate.promise);
      const below = queue.onBelow(1, stop.signal);
      expect(getEventListeners(stop.signal, "abort")).toHaveLength(1);
      gate.resolve();
      await done;
      await below;
    }
    expect(getEventListeners(stop.signal, "abort")).toHaveLength(0);
  });

  it("still reject on abort, the waiter dropped", async () => {
    const queue = newQueue({ concurrency: 1 });
    const stop = new AbortController();
    const gate = deferred();
    const done = add(queue, "k", () => gate.promise);
    const below = queue.onBelow(1, stop.signal);
    stop.abort(new Error("stopping"));
    await expect(below).rejects.toThrow("stopping");
    gate.resolve();
    await done;
    expect(getEventListeners(stop.signal, "abort")).toHaveLength(0);
  });
});
