import { describe, expect, it } from "vitest";
import { MessageMemory } from "../../src/pipeline/conversation-key.ts";

describe("MessageMemory", () => {
  it("finds every remembered id after the ring has wrapped, and forgets the oldest", () => {
    const memory = new MessageMemory(5);
    for (let id = 10; id < 10 + 12 * 3; id += 3) memory.set(id, `k${id}`); // 10, 13, …, 43
    const held = [31, 34, 37, 40, 43];
    for (const id of held) expect(memory.get(id)).toBe(`k${id}`);
    expect(memory.get(28)).toBeUndefined(); // forgotten
    expect(memory.get(32)).toBeUndefined(); // never seen, between two held ids
    expect(memory.get(44)).toBeUndefined();
  });

  it("updates a held id in place (a moved message) and keeps other ids in a side map", () => {
    const memory = new MessageMemory(3);
    for (const id of [1, 2, 3, 4]) memory.set(id, "a");
    memory.set(3, "moved"); // in the ring
    memory.set(1, "moved-old"); // forgotten by the ring: remembered beside it
    expect([memory.get(1), memory.get(2), memory.get(3), memory.get(4)]).toEqual([
      "moved-old",
      "a",
      "moved",
      "a",
    ]);
    memory.set(5, "b"); // still increasing after the out-of-order one
    expect(memory.get(5)).toBe("b");
    expect(memory.get(1)).toBe("moved-old");
  });

  it("remembers ids that arrive out of order, up to its capacity", () => {
    const memory = new MessageMemory(2);
    memory.set(100, "new");
    memory.set(50, "late");
    memory.set(60, "later");
    memory.set(70, "latest"); // the side map is past capacity: its oldest (50) goes
    expect([memory.get(50), memory.get(60), memory.get(70), memory.get(100)]).toEqual([
      undefined,
      "later",
      "latest",
      "new",
    ]);
  });

  it("forgets deleted ids wherever they are kept", () => {
    const memory = new MessageMemory(4);
    for (const id of [5, 6, 7]) memory.set(id, "k");
    memory.set(1, "side");
    memory.delete(6);
    memory.delete(1);
    expect([memory.get(1), memory.get(5), memory.get(6), memory.get(7)]).toEqual([
      undefined,
      "k",
      undefined,
      "k",
    ]);
  });

  it("agrees with a plain map of the last N increasing ids over a long random run", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const capacity = 64;
    const memory = new MessageMemory(capacity);
    const order: number[] = [];
    const model = new Map<number, string>();
    let id = 0;
    for (let step = 0; step < 5_000; step++) {
      id += 1 + Math.floor(random() * 4);
      const key = `k${Math.floor(random() * 9)}`;
      memory.set(id, key);
      model.set(id, key);
      order.push(id);
      if (order.length > capacity) model.delete(order.shift() as number);
      if (random() < 0.2) {
        // Move a message the ring still holds.
        const moved = order[Math.floor(random() * order.length)] as number;
        memory.set(moved, "moved");
        model.set(moved, "moved");
      }
      const probe = id - Math.floor(random() * capacity * 5);
      expect(memory.get(probe)).toBe(model.get(probe));
    }
  });
});
