/**
 * Redis flushed (or restarted without persistence) under two instances sharing it: each instance
 * says so in its error line, as docs/operations/instances.md and running.md promise ("each
 * instance logs an error line saying so", "Said by each instance, once per loss"). The first
 * instance to reconnect makes the index again (`<prefix>#indexed`); before, the second,
 * reconnecting after it, found the marker and said nothing, although every bot it ran lost its
 * state too. Each store now also remembers `<prefix>#life`, a random id written once, and a new
 * one tells it the keys were lost.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisStore } from "../../src/state/redis-store.ts";
import { hasRedisServer, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!available)("a Redis that comes back without bothost's keys, two instances", () => {
  it("is told by each instance, also the one that reconnects second", async () => {
    const redis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const errors: string[] = [];
    const open = async (name: string) => {
      const at = (level: string) => (_obj: object, msg?: string) => {
        if (level === "error") errors.push(`${name}: ${msg?.slice(0, 40)}`);
      };
      const store = await RedisStore.open({
        url: redis.url,
        prefix: "lost",
        commandTimeoutMs: 2_000,
        log: { info: at("info"), warn: at("warn"), error: at("error") },
      });
      cleanups.push(() => store.close());
      return store;
    };
    const first = await open("first");
    await open("second");
    await first.set("cursor", 41);
    const admin = new Redis(redis.url, { lazyConnect: true });
    await admin.connect();
    cleanups.push(() => admin.quit());
    const ids = async () =>
      String(await admin.call("CLIENT", "LIST", "TYPE", "normal"))
        .split("\n")
        .filter((l) => l.includes("id="))
        .map((l) => /id=(\d+)/.exec(l)![1]!)
        .filter((id) => id !== String(adminId));
    const adminId = await admin.call("CLIENT", "ID");
    const before = await ids();
    await admin.flushall();
    // The first instance's connections drop and come back; it makes the index again.
    const [firstIds, secondIds] = [before.slice(0, before.length / 2), before.slice(before.length / 2)];
    for (const id of firstIds) await admin.call("CLIENT", "KILL", "ID", id).catch(() => {});
    await expect.poll(() => errors.length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => admin.exists("lost#indexed"), { timeout: 5_000 }).toBe(1);
    // Then the second's.
    for (const id of secondIds) await admin.call("CLIENT", "KILL", "ID", id).catch(() => {});
    await expect.poll(() => errors.length, { timeout: 10_000 }).toBe(2);
  });
});
