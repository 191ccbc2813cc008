/**
 * A handler run's state (`KV.run`): writes staged and seen by the run, applied by `commit` as one
 * batch marked under the event's key, against every store (Redis when one answers).
 */
import { describe, expect } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { KV } from "../../src/state/kv.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { everyStore, manualClock, test } from "../support/state.ts";

const implementations = await everyStore("staged");

describe.each(implementations)("%s", (_name, open, traits) => {
  const withBot = async (
    dir: string,
    body: (kv: KV, store: StateBackend, clock: ReturnType<typeof manualClock>) => Promise<void>,
  ) => {
    const clock = manualClock();
    const store = await open(dir, clock.now);
    const bot = store.namespace("bot");
    try {
      await body(
        new KV(bot.namespace("kv"), { store: bot.namespace("applied"), ttlMs: 60_000 }),
        store,
        clock,
      );
    } finally {
      await store.close();
    }
  };

  test("a run sees its own writes; the store sees them only once the run commits", async ({ dir }) => {
    await withBot(dir, async (kv) => {
      await kv.set("kept", "before");
      await kv.set("gone", 1);
      const run = KV.run(kv, String, "m:1");
      await run.state.set("a", { n: 1 });
      expect(await run.state.update<number>("count", (n) => (n ?? 0) + 1)).toBe(1);
      expect(await run.state.update<number>("count", (n) => (n ?? 0) + 1)).toBe(2);
      expect(await run.state.delete("gone")).toBe(true);
      expect(await run.state.setIfAbsent("kept", "no")).toBe(false);
      expect(await run.state.setIfAbsent("claim", "mine")).toBe(true);
      expect(await run.state.get("a")).toEqual({ n: 1 });
      expect(await run.state.get("gone")).toBeUndefined();
      expect(await run.state.list()).toEqual([
        { key: "a", value: { n: 1 } },
        { key: "claim", value: "mine" },
        { key: "count", value: 2 },
        { key: "kept", value: "before" },
      ]);
      // Nothing reached the store yet.
      expect(await kv.list()).toEqual([
        { key: "gone", value: 1 },
        { key: "kept", value: "before" },
      ]);
      expect(await run.commit()).toBe(true);
      expect(await kv.list()).toEqual([
        { key: "a", value: { n: 1 } },
        { key: "claim", value: "mine" },
        { key: "count", value: 2 },
        { key: "kept", value: "before" },
      ]);
    });
  });

  test("a run that never commits (it failed) leaves nothing; a run without writes commits nothing", async ({
    dir,
  }) => {
    await withBot(dir, async (kv) => {
      const failed = KV.run(kv, String, "m:2");
      await failed.state.update<number>("count", (n) => (n ?? 0) + 1);
      const quiet = KV.run(kv, String, "m:3");
      expect(await quiet.state.get("count")).toBeUndefined();
      expect(quiet.commit()).toBeUndefined();
      expect(await kv.get("count")).toBeUndefined();
    });
  });

  test("the writes of an event apply once, however many runs of it commit", async ({ dir }) => {
    await withBot(dir, async (kv) => {
      for (let i = 0; i < 3; i++) {
        const run = KV.run(kv, String, "m:4");
        await run.state.update<number>("count", (n) => (n ?? 0) + 1);
        expect(await run.commit()).toBe(i === 0);
      }
      expect(await kv.get("count")).toBe(1);
      // Another event's run counts again; the marker is not a key of the bot's.
      const other = KV.run(kv, String, "m:5");
      await other.state.update<number>("count", (n) => (n ?? 0) + 1);
      await other.commit();
      expect(await kv.list()).toEqual([{ key: "count", value: 2 }]);
    });
  });

  test("update applies its function again at commit, so concurrent runs and other writers all count", async ({
    dir,
  }) => {
    await withBot(dir, async (kv) => {
      const run = KV.run(kv, String, "m:6");
      expect(await run.state.update<number>("count", (n) => (n ?? 0) + 1)).toBe(1);
      await kv.set("count", 10); // written meanwhile by another conversation
      await run.commit();
      expect(await kv.get("count")).toBe(11);

      const runs = Array.from({ length: 20 }, (_, i) => KV.run(kv, String, `m:${100 + i}`));
      await Promise.all(runs.map((r) => r.state.update<number>("count", (n) => (n ?? 0) + 1)));
      await Promise.all(runs.map((r) => r.commit()));
      expect(await kv.get("count")).toBe(31);
    });
  });

  test("immediate writes at once, even from a run that later fails", async ({ dir }) => {
    await withBot(dir, async (kv) => {
      const run = KV.run(kv, String, "m:7");
      expect(run.state.immediate).toBe(kv);
      await run.state.immediate.update<number>("attempts", (n) => (n ?? 0) + 1);
      await run.state.set("result", "never");
      expect(await kv.get("attempts")).toBe(1);
      expect(await kv.get("result")).toBeUndefined();
    });
  });

  test("checks keys and values when written, not at commit", async ({ dir }) => {
    await withBot(dir, async (kv) => {
      const run = KV.run(kv, String, "m:8");
      await expect(run.state.set("x", Number.NaN)).rejects.toMatchObject({ code: "STATE_INVALID_VALUE" });
      await expect(run.state.set("", 1)).rejects.toMatchObject({ code: "STATE_INVALID_KEY" });
      await expect(run.state.set("x", 1, { ttlMs: -1 })).rejects.toMatchObject({
        code: "STATE_INVALID_VALUE",
      });
      expect(run.commit()).toBeUndefined();
    });
  });

  test.runIf(traits.manualClock)(
    "expiry counts from the commit; update keeps it, set replaces it",
    async ({ dir }) => {
      await withBot(dir, async (kv, _store, clock) => {
        await kv.set("kept", 1, { ttlMs: 1_000 });
        const run = KV.run(kv, String, "m:9");
        await run.state.set("short", 1, { ttlMs: 500 });
        await run.state.update<number>("kept", (n) => (n ?? 0) + 1);
        await run.state.set("forever", 1, { ttlMs: 100 });
        await run.state.set("forever", 2);
        clock.advance(400);
        await run.commit();
        clock.advance(400);
        expect(await kv.get("short")).toBe(1);
        expect(await kv.get("kept")).toBe(2);
        clock.advance(300);
        expect(await kv.get("short")).toBeUndefined();
        expect(await kv.get("kept")).toBeUndefined();
        expect(await kv.get("forever")).toBe(2);
      });
    },
  );
});

test("FileStore: a run's writes and its marker survive a reopen together", async ({ dir }) => {
  const first = await FileStore.open(dir, { autoFlushMs: 0 });
  const kvOf = (s: StateBackend) =>
    new KV(s.namespace("kv"), { store: s.namespace("applied"), ttlMs: 60_000 });
  const run = KV.run(kvOf(first), String, "m:1");
  await run.state.update<number>("count", (n) => (n ?? 0) + 1);
  await run.commit();
  await first.close();
  const second = await FileStore.open(dir, { autoFlushMs: 0 });
  try {
    const again = KV.run(kvOf(second), String, "m:1");
    await again.state.update<number>("count", (n) => (n ?? 0) + 1);
    expect(await again.commit()).toBe(false);
    expect(await second.namespace("kv").get("count")).toBe(1);
  } finally {
    await second.close();
  }
});
