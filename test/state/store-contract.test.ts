/**
 * The StateStore contract, run against every implementation so they cannot drift apart. The Redis
 * store joins when a Redis answers (see `test/support/redis.ts`); its expiry runs on Redis's own clock, so the
 * manual-clock expiry test is replaced for it by `redis-store.test.ts`.
 */
import { describe, expect } from "vitest";
import type { StateBackend } from "../../src/state/state-store.ts";
import { everyStore, manualClock, test } from "../support/state.ts";

const implementations = await everyStore("contract");

describe.each(implementations)("%s", (_name, open, traits) => {
  const withStore = async (
    dir: string,
    body: (s: StateBackend, clock: ReturnType<typeof manualClock>) => Promise<void>,
  ) => {
    const clock = manualClock();
    const store = await open(dir, clock.now);
    try {
      await body(store, clock);
    } finally {
      await store.close();
    }
  };

  test("round-trips JSON values and copies them in and out", async ({ dir }) => {
    await withStore(dir, async (store) => {
      const value = { a: [1, "two", null, true, { b: 2.5 }], "weird key": "é🙂" };
      await store.set("k", value);
      expect(await store.get("k")).toEqual(value);
      value.a.push(99);
      const got = (await store.get("k")) as { a: unknown[] };
      expect(got.a).toHaveLength(5);
      got.a.push(100);
      expect(((await store.get("k")) as { a: unknown[] }).a).toHaveLength(5);
      expect(await store.get("missing")).toBeUndefined();
      expect(await store.delete("k")).toBe(true);
      expect(await store.delete("k")).toBe(false);
      expect(await store.get("k")).toBeUndefined();
    });
  });

  test("refuses values that are not plain JSON, naming the path", async ({ dir }) => {
    await withStore(dir, async (store) => {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const cases: Array<[unknown, string]> = [
        [undefined, 'Cannot store key "k": value is undefined.'],
        [{ a: [1, Number.NaN] }, 'Cannot store key "k": value.a[1] is NaN (not finite).'],
        [
          { when: new Date(0) },
          'Cannot store key "k": value.when is a Date, not a plain object (convert it, e.g. date.toISOString()).',
        ],
        [
          new Map(),
          'Cannot store key "k": value is a Map, not a plain object (convert it, e.g. date.toISOString()).',
        ],
        [{ f: () => 1 }, 'Cannot store key "k": value.f is function.'],
        [10n, 'Cannot store key "k": value is bigint.'],
        [cyclic, 'Cannot store key "k": value.self is a circular reference.'],
      ];
      for (const [value, message] of cases) {
        const err = await store.set("k", value as never).catch((e: unknown) => e);
        expect(err).toMatchObject({ name: "StateError", code: "STATE_INVALID_VALUE" });
        expect((err as Error).message).toBe(
          `${message} Store plain JSON (objects, arrays, strings, finite numbers, booleans, null).`,
        );
      }
      expect(await store.get("k")).toBeUndefined();
    });
  });

  test("refuses bad keys and namespace names", async ({ dir }) => {
    await withStore(dir, async (store) => {
      await expect(store.get("")).rejects.toMatchObject({
        code: "STATE_INVALID_KEY",
        message: "State key must not be empty.",
      });
      await expect(store.set(5 as never, 1)).rejects.toMatchObject({
        code: "STATE_INVALID_KEY",
        message: "State key must be a string, got number.",
      });
      await expect(store.get("x".repeat(1025))).rejects.toMatchObject({
        code: "STATE_INVALID_KEY",
        message: `State key "${"x".repeat(40)}…" is 1025 characters; the limit is 1024. Hash long identifiers before using them as keys.`,
      });
      expect(() => store.namespace("")).toThrow("State namespace must not be empty.");
    });
  });

  test("setIfAbsent lets exactly one of many concurrent callers win", async ({ dir }) => {
    await withStore(dir, async (store) => {
      const views = [store.namespace("bot"), store.namespace("bot"), store.namespace("bot")];
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (views[i % 3] as typeof store).setIfAbsent("reported:42", i)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await store.namespace("bot").get("reported:42")).toBe(winner);
      expect(await store.namespace("bot").setIfAbsent("reported:42", -1)).toBe(false);
    });
  });

  test("update is an atomic read-modify-write", async ({ dir }) => {
    await withStore(dir, async (store) => {
      await Promise.all(
        Array.from({ length: 50 }, () => store.update("n", (n) => (typeof n === "number" ? n + 1 : 1))),
      );
      expect(await store.get("n")).toBe(50);
      expect(await store.update("n", () => undefined)).toBeUndefined();
      expect(await store.get("n")).toBeUndefined();
      await store.set("m", 1);
      await expect(
        store.update("m", () => {
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await store.get("m")).toBe(1);
    });
  });

  test("getMany reads keys in their order, absent ones as undefined, only this view's", async ({ dir }) => {
    await withStore(dir, async (store) => {
      const ns = store.namespace("a");
      await ns.set("x", 1);
      await ns.set("z", { deep: [3] });
      await store.namespace("b").set("y", 2);
      expect(await ns.getMany(["z", "y", "x", "x"])).toEqual([{ deep: [3] }, undefined, 1, 1]);
      expect(await ns.getMany([])).toEqual([]);
    });
  });

  test("a batch's update means the same whether what it expects is right, stale or absent", async ({
    dir,
  }) => {
    await withStore(dir, async (store) => {
      const seen: unknown[] = [];
      const bump = (expect: string | null | undefined) => ({
        op: "update" as const,
        key: "h",
        expect,
        fn: (n: unknown) => {
          seen.push(n);
          return typeof n === "number" ? n + 1 : 1;
        },
      });
      // Created: expected absent, and it was.
      await store.applyWrites([bump(null), { op: "set", key: "e0", text: "[1]" }]);
      // Right: 1 is there.
      await store.applyWrites([bump("1"), { op: "set", key: "e1", text: "[2]" }]);
      // Stale (it holds 2, not 1), and wrongly absent: the function still sees what is there.
      await store.applyWrites([bump("1"), { op: "delete", key: "e0" }]);
      await store.applyWrites([bump(null)]);
      expect(await store.getMany(["h", "e0", "e1"])).toEqual([4, undefined, [2]]);
      expect(seen.at(-1)).toBe(3);
      // A refusal by the function writes nothing of the batch.
      const refuse = {
        op: "update" as const,
        key: "h",
        expect: "4",
        fn: () => {
          throw new Error("moved");
        },
      };
      await expect(store.applyWrites([refuse, { op: "set", key: "e2", text: "[3]" }])).rejects.toThrow(
        "moved",
      );
      expect(await store.getMany(["h", "e2"])).toEqual([4, undefined]);
    });
  });

  test.skipIf(!traits.manualClock)(
    "expires keys after their TTL; update keeps or resets the expiry",
    async ({ dir }) => {
      await withStore(dir, async (store, clock) => {
        await store.set("a", 1, { ttlMs: 1000 });
        await store.set("b", 1, { ttlMs: 1000 });
        clock.advance(500);
        await store.update("a", () => 2); // keeps expiry at t+1000
        await store.update("b", () => 2, { ttlMs: 1000 }); // now expires at t+1500
        clock.advance(499);
        expect(await store.list()).toEqual([
          { key: "a", value: 2 },
          { key: "b", value: 2 },
        ]);
        clock.advance(1);
        expect(await store.get("a")).toBeUndefined();
        expect(await store.get("b")).toBe(2);
        expect(await store.setIfAbsent("a", 3)).toBe(true);
        clock.advance(500);
        expect(await store.list()).toEqual([{ key: "a", value: 3 }]);
        expect(await store.delete("b")).toBe(false);
        await store.set("c", 1, { ttlMs: 5 });
        await store.set("c", 2); // a plain set removes the expiry
        clock.advance(10);
        expect(await store.get("c")).toBe(2);
        await expect(store.set("d", 1, { ttlMs: 0 })).rejects.toMatchObject({
          code: "STATE_INVALID_VALUE",
          message: "ttlMs must be a positive number of milliseconds, got 0.",
        });
      });
    },
  );

  test("namespaces are isolated, whatever characters keys contain", async ({ dir }) => {
    await withStore(dir, async (store) => {
      const a = store.namespace("a");
      const ab = a.namespace("b");
      await store.set("a/x", "root");
      await a.set("x", "a");
      await a.set("b/c", "a-slash");
      await ab.set("c", "a.b");
      await store.namespace("b").set("x", "b");
      await a.set("100%/y", "percent");
      expect(await store.get("a/x")).toBe("root");
      expect(await a.get("x")).toBe("a");
      expect(await a.get("b/c")).toBe("a-slash");
      expect(await ab.get("c")).toBe("a.b");
      expect(await store.namespace("b").get("x")).toBe("b");
      expect(await a.list()).toEqual([
        { key: "100%/y", value: "percent" },
        { key: "b/c", value: "a-slash" },
        { key: "x", value: "a" },
      ]);
      expect(await a.list("b")).toEqual([{ key: "b/c", value: "a-slash" }]);
      expect(await a.list("100%")).toEqual([{ key: "100%/y", value: "percent" }]);
      expect(await ab.list()).toEqual([{ key: "c", value: "a.b" }]);
      expect(await store.list()).toEqual([{ key: "a/x", value: "root" }]);
      expect(await ab.delete("x")).toBe(false);
    });
  });

  test("commit() and flush() resolve once every earlier write is in, which stays readable", async ({
    dir,
  }) => {
    await withStore(dir, async (store) => {
      let written = false;
      const write = store
        .namespace("bot")
        .set("k", { n: 1 })
        .then(() => {
          written = true;
        });
      await store.commit();
      expect(written).toBe(true);
      await write;
      await store.commit(); // nothing new
      expect(await store.namespace("bot").get("k")).toEqual({ n: 1 });
      await store.set("k2", 2);
      await store.commit();
      await store.flush();
      expect(await store.list()).toEqual([{ key: "k2", value: 2 }]);
    });
  });

  test("clear() deletes a view's keys and its namespaces', nothing beside it, and stays cleared", async ({
    dir,
  }) => {
    await withStore(dir, async (store) => {
      const bot = store.namespace("bot");
      await bot.set("server", { url: "a" });
      await bot.namespace("runtime").set("cursor", 7);
      await bot.namespace("bookings").namespace("deep").set("x*[?]", 1, { ttlMs: 60_000 });
      await store.namespace("bot-2").set("k", "other bot");
      await store.namespace("bo").set("t", "prefix of the name, not a child");
      await store.set("bot", "root key named like the namespace");
      expect(await bot.clear()).toBe(3);
      expect(await bot.get("server")).toBeUndefined();
      expect(await bot.namespace("runtime").list()).toEqual([]);
      expect(await bot.clear()).toBe(0);
      expect(await store.namespace("bot-2").get("k")).toBe("other bot");
      expect(await store.namespace("bo").get("t")).toBe("prefix of the name, not a child");
      expect(await store.get("bot")).toBe("root key named like the namespace");
    });
    if (traits.manualClock) {
      // What was cleared stays cleared after a reopen (the file store journals each delete).
      await withStore(dir, async (store) => {
        expect(await store.namespace("bot").namespace("runtime").get("cursor")).toBeUndefined();
      });
    }
  });

  test("a closed store refuses work", async ({ dir }) => {
    const store = await open(dir, Date.now);
    const ns = store.namespace("bot");
    await store.close();
    await store.close(); // idempotent
    await expect(ns.get("x")).rejects.toMatchObject({ name: "StateError", code: "STATE_CLOSED" });
    await expect(store.flush()).rejects.toMatchObject({ code: "STATE_CLOSED" });
    await expect(store.commit()).rejects.toMatchObject({ code: "STATE_CLOSED" });
    await expect(store.list()).rejects.toMatchObject({ code: "STATE_CLOSED" });
  });
});
