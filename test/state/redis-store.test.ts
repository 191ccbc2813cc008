/**
 * What only the Redis store has: expiry on Redis's clock, fenced writes, the key layout, and the
 * errors for an unreachable server. The shared contract is in store-contract.test.ts.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fence } from "../../src/state/redis-connection.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import {
  dropPrefix,
  monitorRedis,
  noRedisMessage,
  redisReachable,
  redisUrl,
  uniquePrefix,
} from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`redis-store: ${noRedisMessage}`);

describe.skipIf(!reachable)("RedisStore", () => {
  const prefix = uniquePrefix("store");
  let store: RedisStore;
  /** A connection of the test's own, to look at and change keys behind the store's back. */
  let client: Redis;
  // Made in the hook, not while the file is collected: a skipped suite makes no client.
  beforeAll(async () => {
    client = new Redis(redisUrl);
    store = await RedisStore.open({ url: redisUrl, prefix });
  });
  afterAll(async () => {
    await store?.close();
    client?.disconnect();
    await dropPrefix(prefix);
  });

  it("keeps keys under <prefix>: with the embedded store's escaped paths, values as JSON text", async () => {
    await store.namespace("echo").namespace("kv").set("a/b", { n: 1 });
    expect(await client.get(`${prefix}:echo/kv/a%2Fb`)).toBe('{"n":1}');
  });

  it("a batch of sets and updates that say what they expect is one call when they are right", async () => {
    const ns = store.namespace("blind");
    await ns.applyWrites([{ op: "set", key: "h", text: "1" }]);
    const seen: string[][] = [];
    const monitor = await monitorRedis(({ source, args }) => {
      // Calls the store sent, not those its scripts made inside Redis.
      if (source !== "lua" && args.some((a) => a.startsWith(`${prefix}:blind/`))) seen.push(args);
    });
    const bump = (expect: string) => ({
      op: "update" as const,
      key: "h",
      expect,
      fn: (n: unknown) => (n as number) + 1,
    });
    await ns.applyWrites([bump("1"), { op: "set", key: "e1", text: "[1]" }]);
    await ns.get("between");
    await ns.applyWrites([bump("1"), { op: "set", key: "e2", text: "[2]" }]);
    await ns.get("after");
    // The monitor reports after the fact: wait for the last call to be seen.
    await expect.poll(() => seen.some((args) => args.some((a) => a.endsWith("/after")))).toBe(true);
    monitor.close();
    const commands = seen.map((args) => args[0]?.toLowerCase());
    // Right: the script alone. Stale (it held 2): the script refused, a read, the script again.
    expect(commands).toEqual(["evalsha", "get", "evalsha", "mget", "evalsha", "get"]);
    expect(await ns.getMany(["h", "e1", "e2"])).toEqual([3, [1], [2]]);
  });

  it("expires on Redis's clock: PX on set, kept by update, reset by update with ttlMs, removed by set", async () => {
    const ns = store.namespace("ttl");
    const pttl = (key: string) => client.pttl(`${prefix}:ttl/${key}`);
    await ns.set("a", 1, { ttlMs: 60_000 });
    expect(await pttl("a")).toBeGreaterThan(50_000);
    await ns.update("a", () => 2);
    expect(await pttl("a")).toBeGreaterThan(50_000);
    await ns.update("a", () => 3, { ttlMs: 600_000 });
    expect(await pttl("a")).toBeGreaterThan(500_000);
    await ns.set("a", 4);
    expect(await pttl("a")).toBe(-1);
    await ns.set("short", 1, { ttlMs: 20 });
    expect(await ns.setIfAbsent("claim", 1, { ttlMs: 20 })).toBe(true);
    await expect.poll(() => ns.get("short")).toBeUndefined();
    await expect.poll(() => ns.setIfAbsent("claim", 2)).toBe(true);
    expect(await ns.list()).toEqual([
      { key: "a", value: 4 },
      { key: "claim", value: 2 },
    ]);
  });

  it("lists keys holding glob characters literally", async () => {
    const ns = store.namespace("glob");
    await ns.set("a*", 1);
    await ns.set("a[1]", 2);
    await ns.set("ab", 3);
    expect((await ns.list("a*")).map((e) => e.key)).toEqual(["a*"]);
    expect((await ns.list("a[")).map((e) => e.key)).toEqual(["a[1]"]);
  });

  describe("listing from the per-namespace index", () => {
    it("sends no SCAN: a listing reads its namespace's index, whatever else the Redis holds", async () => {
      const ns = store.namespace("letters");
      for (let i = 0; i < 5; i++) await ns.set(`l${i}`, i);
      await client.mset(...Array.from({ length: 2_000 }, (_, i) => [`${prefix}-other:${i}`, "x"]).flat());
      try {
        const scans: string[] = [];
        const marker = `${prefix}-listed`;
        let markerSeen!: () => void;
        const seen = new Promise<void>((resolve) => {
          markerSeen = resolve;
        });
        const monitor = await monitorRedis(({ args }) => {
          if (args[0]?.toLowerCase() === "scan" && args.some((a) => a.startsWith(prefix)))
            scans.push(args.join(" "));
          if (args[1] === marker) markerSeen();
        });
        expect((await ns.list()).map((e) => e.key)).toEqual(["l0", "l1", "l2", "l3", "l4"]);
        expect((await ns.list("l3")).map((e) => e.key)).toEqual(["l3"]);
        // MONITOR lines come in the order Redis ran the commands, after the replies: a command
        // sent once both listings were answered is seen after every command they sent.
        await client.get(marker);
        await seen;
        monitor.close();
        expect(scans).toEqual([]);
      } finally {
        await client.del(...Array.from({ length: 2_000 }, (_, i) => `${prefix}-other:${i}`));
      }
    });

    it("keeps no expired key: a listing prunes it from the index", async () => {
      const ns = store.namespace("short-lived");
      await ns.set("gone", 1, { ttlMs: 20 });
      await ns.update("kept", () => 2);
      await expect.poll(() => client.exists(`${prefix}:short-lived/gone`)).toBe(0);
      expect(await ns.list()).toEqual([{ key: "kept", value: 2 }]);
      expect(await client.zrange(`${prefix}#ns:${prefix}:short-lived/`, "0", "-1")).toEqual(["kept"]);
      expect(await client.zcard(`${prefix}#expiring`)).toBe(0);
      await ns.delete("kept");
      expect(await client.exists(`${prefix}#ns:${prefix}:short-lived/`)).toBe(0);
    });

    it("indexes, once, the keys a store written before the index holds", async () => {
      const old = uniquePrefix("unindexed");
      await client.set(`${old}:echo/letters/a`, "1");
      await client.set(`${old}:echo/letters/b`, "2", "PX", 600_000);
      const reopened = await RedisStore.open({ url: redisUrl, prefix: old });
      try {
        expect(await reopened.namespace("echo").namespace("letters").list()).toEqual([
          { key: "a", value: 1 },
          { key: "b", value: 2 },
        ]);
        expect(await client.exists(`${old}#indexed`)).toBe(1);
      } finally {
        await reopened.close();
        await dropPrefix(old);
      }
    });
  });

  describe("fenced writes", () => {
    const leaseKey = () => `${prefix}#lease:fence-test`;
    let fence: Fence | undefined;
    const source = { current: () => fence, description: 'bot "herald"' };
    const refused = {
      name: "StateError",
      code: "STATE_FENCED",
      message:
        'Write refused: this instance no longer holds the lease of bot "herald" (another instance runs it now, or the lease expired while Redis was out of reach). Nothing was changed; the bot is being stopped here.',
    };

    it("go through while the lease key holds the writer's value, and are refused once it changed", async () => {
      await client.set(leaseKey(), "7:instance-a", "PX", 60_000);
      fence = { key: leaseKey(), value: "7:instance-a" };
      const ns = store.fenced(source).namespace("herald").namespace("runtime");
      await ns.set("cursor", 10);
      expect(await ns.setIfAbsent("handled:11", 1)).toBe(true);
      expect(await ns.update("n", () => 1)).toBe(1);

      // Another instance took the lease with a newer token: every write of the stale one is refused.
      await client.set(leaseKey(), "8:instance-b", "PX", 60_000);
      await expect(ns.set("cursor", 99)).rejects.toMatchObject(refused);
      await expect(ns.setIfAbsent("handled:12", 1)).rejects.toMatchObject(refused);
      await expect(ns.update("n", () => 2)).rejects.toMatchObject(refused);
      await expect(ns.delete("handled:11")).rejects.toMatchObject(refused);
      const batch = [{ op: "set", key: "cursor", text: "99" }] as const;
      const marker = { store: ns, key: "m:12", ttlMs: 60_000 };
      await expect(ns.applyWrites(batch, marker)).rejects.toMatchObject(refused);
      expect(await ns.get("m:12")).toBeUndefined();
      expect(await ns.get("cursor")).toBe(10);
      expect(await ns.get("handled:12")).toBeUndefined();
      expect(await ns.get("n")).toBe(1);
      expect(await ns.get("handled:11")).toBe(1);

      // The same token held by another instance (after a Redis that lost its data) is not ours either.
      await client.set(leaseKey(), "7:instance-b", "PX", 60_000);
      await expect(ns.set("cursor", 99)).rejects.toMatchObject(refused);
      // An expired lease refuses too.
      await client.del(leaseKey());
      await expect(ns.set("cursor", 99)).rejects.toMatchObject(refused);
      expect(await ns.get("cursor")).toBe(10);
    });

    it("are refused without asking Redis while this instance holds no lease", async () => {
      fence = undefined;
      const ns = store.fenced(source).namespace("herald");
      await expect(ns.set("x", 1)).rejects.toMatchObject(refused);
      await expect(ns.applyWrites([{ op: "set", key: "x", text: "1" }])).rejects.toMatchObject(refused);
      expect(await ns.get("x")).toBeUndefined();
    });

    it("still check values and keys before the fence", async () => {
      fence = undefined;
      const ns = store.fenced(source);
      await expect(ns.set("x", Number.NaN)).rejects.toMatchObject({ code: "STATE_INVALID_VALUE" });
      await expect(ns.set("", 1)).rejects.toMatchObject({ code: "STATE_INVALID_KEY" });
    });
  });

  it("says a failed write may have been applied, and a failed read nothing of the kind", async () => {
    // A key of another type under the store's prefix: Redis refuses both commands (WRONGTYPE).
    await client.rpush(`${prefix}:odd/kv/list`, "x");
    const ns = store.namespace("odd").namespace("kv");
    const read = (await ns.get("list").catch((e: unknown) => e)) as Error;
    expect(read).toMatchObject({ code: "STATE_UNAVAILABLE" });
    expect(read.message).toMatch(
      /did not complete a read: WRONGTYPE .+\. Check that Redis runs and is reachable\.$/,
    );
    // An update that expects the key absent goes as one script, which reads the key in Redis.
    const write = (await ns
      .applyWrites([{ op: "update", key: "list", fn: () => 1, expect: null }])
      .catch((e: unknown) => e)) as Error;
    expect(write).toMatchObject({ code: "STATE_UNAVAILABLE" });
    expect(write.message).toMatch(/may or may not have been applied\.$/);
  });

  it("says which server could not be reached, without its password", async () => {
    const err = await RedisStore.open({ url: "redis://:s3cret-pw@127.0.0.1:1/2", prefix: "x" }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: "StateError", code: "STATE_UNAVAILABLE" });
    expect((err as Error).message).toMatch(
      /^Cannot connect to Redis at redis:\/\/127\.0\.0\.1:1\/2 \(state\.redis\): .+\. Check that Redis runs there and that the URL, password and database are right\.$/,
    );
    expect((err as Error).message).not.toContain("s3cret-pw");
  });

  it("refuses a prefix that would need escaping", async () => {
    await expect(RedisStore.open({ url: redisUrl, prefix: "a:b" })).rejects.toMatchObject({
      code: "STATE_INVALID_KEY",
      message: 'The Redis key prefix "a:b" must be 1 to 64 letters, digits, "_", "." or "-".',
    });
  });
});
