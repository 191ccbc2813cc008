/**
 * The queue against its rules under a random mix of tasks: synchronous and asynchronous ones,
 * ones that hold their key, throw, or push more tasks (of their own key or another) while they
 * run, pushed when the queue is empty (they run at once) and when it is busy. Seeded, so a
 * failure can be replayed.
 */
import { describe, expect, it } from "vitest";
import type { TaskControl } from "../../src/pipeline/conversation-queue.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { newQueue } from "../support/pipeline.ts";

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function run(seed: number): Promise<void> {
  const random = seeded(seed);
  const concurrency = 1 + Math.floor(random() * 3);
  const queue = newQueue({ concurrency, clock: new ManualClock(0) });
  const keys = ["a", "b", "c"];
  const pushed = new Map<string, number[]>(keys.map((k) => [k, []]));
  const started = new Map<string, number[]>(keys.map((k) => [k, []]));
  const busy = new Set<string>();
  const problems: string[] = [];
  let running = 0;
  let next = 0;
  let finished = 0;

  const push = (depth: number): void => {
    const key = keys[Math.floor(random() * keys.length)] as string;
    const id = next++;
    pushed.get(key)?.push(id);
    const kind = random();
    queue.push(
      key,
      (control: TaskControl) => {
        if (busy.has(key)) problems.push(`task ${id} started while key ${key} was busy`);
        busy.add(key);
        started.get(key)?.push(id);
        if (++running > concurrency) problems.push(`${running} tasks ran at once`);
        if (depth < 2) for (let i = Math.floor(random() * 3); i > 0; i--) push(depth + 1);
        const end = () => {
          running--;
          busy.delete(key);
        };
        if (kind < 0.35) return end();
        if (kind < 0.45) {
          end();
          throw new Error("sync failure");
        }
        if (kind < 0.6) {
          // Holds the key past its return; the slot is free at once.
          running--;
          const ticks = Math.floor(random() * 5);
          control.holdKey(
            (async () => {
              for (let i = 0; i < ticks; i++) await turn();
              busy.delete(key);
            })(),
          );
          return;
        }
        const ticks = Math.floor(random() * 5);
        return (async () => {
          for (let i = 0; i < ticks; i++) await turn();
          end();
        })();
      },
      undefined,
      () => finished++,
    );
  };

  for (let round = 0; round < 80; round++) {
    // Now and then from an empty queue, where a task runs at once.
    if (random() < 0.3) await queue.onIdle();
    for (let i = 1 + Math.floor(random() * 3); i > 0; i--) push(0);
    if (random() < 0.5) await turn();
  }
  await queue.onIdle();
  expect(problems).toEqual([]);
  for (const key of keys) expect(started.get(key)).toEqual(pushed.get(key));
  expect(finished).toBe(next);
  expect(queue.inFlight).toBe(0);
}

describe("ConversationQueue under a random mix of tasks", () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])(
    "keeps every key's order, one task per key and the concurrency limit (seed %i)",
    async (seed) => {
      await run(seed);
    },
  );
});
