import { describe, expect } from "vitest";
import { BotState } from "../../src/state/bot-state.ts";
import { DedupSet } from "../../src/state/dedup-set.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { test } from "./support.ts";

describe("BotState cursor", () => {
  test("starts empty and never moves backwards", async () => {
    const state = new BotState(new MemoryStore(), "greeter");
    expect(await state.cursor()).toBeUndefined();
    expect(await state.advanceCursor(10)).toBe(10);
    expect(await state.advanceCursor(3)).toBe(10);
    expect(await state.advanceCursor(10)).toBe(10);
    expect(await state.cursor()).toBe(10);
    await Promise.all([40, 12, 39, 7].map((id) => state.advanceCursor(id)));
    expect(await state.cursor()).toBe(40);
  });

  test("refuses an id that is not a message id", async () => {
    const state = new BotState(new MemoryStore(), "greeter");
    await expect(state.advanceCursor(-1)).rejects.toMatchObject({
      code: "STATE_INVALID_VALUE",
      message: "The cursor must be a message id (a non-negative integer), got -1.",
    });
    await expect(state.advanceCursor(1.5)).rejects.toMatchObject({ code: "STATE_INVALID_VALUE" });
  });
});

describe("BotState dedup", () => {
  test("says whether an id was seen, exactly once under concurrency", async () => {
    const state = new BotState(new MemoryStore(), "greeter");
    expect(await state.seen(42)).toBe(false);
    expect(await state.seen(42)).toBe(true);
    const results = await Promise.all(Array.from({ length: 20 }, () => state.seen(43)));
    expect(results.filter((r) => r === false)).toHaveLength(1);
    await expect(state.seen(Number.NaN)).rejects.toMatchObject({
      code: "STATE_INVALID_VALUE",
      message: "Dedup ids must be integers or non-empty strings, got null.",
    });
  });

  test("remembers only the last N ids", async () => {
    const store = new MemoryStore();
    const state = new BotState(store, "greeter", { dedupSize: 3 });
    for (const id of [1, 2, 3, 4, 5]) expect(await state.seen(id)).toBe(false);
    expect((await store.namespace("greeter").namespace("dedup").list()).map((e) => e.key)).toEqual([
      "3",
      "4",
      "5",
    ]);
    expect(await state.seen(5)).toBe(true);
    expect(await state.seen(3)).toBe(true);
    expect(await state.seen(1)).toBe(false); // forgotten, so claimed again (evicting 3)
    expect(await state.seen(3)).toBe(false);
    expect(() => new DedupSet(store, 0)).toThrow("Dedup capacity must be a positive integer, got 0.");
  });

  test("persists across a restart, in claim order", async ({ dir }) => {
    const first = await FileStore.open(dir, { autoFlushMs: 0 });
    const before = new BotState(first, "greeter", { dedupSize: 3 });
    for (const id of [30, 10, 20]) await before.seen(id);
    await before.advanceCursor(30);
    await first.close();

    const second = await FileStore.open(dir, { autoFlushMs: 0 });
    const after = new BotState(second, "greeter", { dedupSize: 3 });
    expect(await after.cursor()).toBe(30);
    expect(await after.seen(10)).toBe(true);
    expect(await after.seen(40)).toBe(false); // evicts 30, the oldest claim
    expect(await after.seen(20)).toBe(true);
    expect(await after.seen(30)).toBe(false);
    await second.close();
  });

  test("shrinks to a smaller dedupSize on load", async () => {
    const store = new MemoryStore();
    const big = new BotState(store, "b", { dedupSize: 5 });
    for (const id of [1, 2, 3, 4, 5]) await big.seen(id);
    const small = new BotState(store, "b", { dedupSize: 2 });
    expect(await small.seen(5)).toBe(true);
    expect((await store.namespace("b").namespace("dedup").list()).map((e) => e.key)).toEqual(["4", "5"]);
  });
});

describe("BotState kv", () => {
  test("is typed JSON storage, isolated per bot and from the runtime's records", async () => {
    const store = new MemoryStore();
    const a = new BotState(store, "a");
    const b = new BotState(store, "b");
    await a.kv.set("count", 1);
    await a.kv.set("cursor", "mine");
    await a.advanceCursor(5);
    expect(await a.kv.get<number>("count")).toBe(1);
    expect(await b.kv.get("count")).toBeUndefined();
    expect(await a.kv.get("cursor")).toBe("mine");
    expect(await a.cursor()).toBe(5);
    expect(await a.kv.update<number>("count", (n) => (n ?? 0) + 1)).toBe(2);
    expect(await a.kv.setIfAbsent("once", true)).toBe(true);
    expect(await a.kv.setIfAbsent("once", true)).toBe(false);
    expect(await a.kv.list<number | string | boolean>()).toEqual([
      { key: "count", value: 2 },
      { key: "cursor", value: "mine" },
      { key: "once", value: true },
    ]);
    expect(await a.kv.delete("once")).toBe(true);
    await expect(a.kv.set("when", new Date(0))).rejects.toMatchObject({ code: "STATE_INVALID_VALUE" });
  });
});
