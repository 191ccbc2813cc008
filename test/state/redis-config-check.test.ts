/**
 * A Redis that would lose bothost's state without a word (no append-only file, or a memory
 * policy that evicts keys) is said once, in a warning per risk, when a store opens on it; a Redis
 * set up as the docs ask is not. On a redis-server of the test's own (skipped without one on PATH).
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisStore } from "../../src/state/redis-store.ts";
import { hasRedisServer, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("redis config check: redis-server is not on PATH: skipped");

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** The warnings of a store opened on a Redis of the test's own, after `configure` set it up. */
async function warningsOpening(configure: (admin: Redis) => Promise<unknown>) {
  const redis = await startOwnRedis();
  cleanups.push(() => redis.stop());
  const admin = new Redis(redis.url, { lazyConnect: true });
  await admin.connect();
  cleanups.push(() => admin.quit());
  await configure(admin);
  const warns: { obj: object; msg: string | undefined }[] = [];
  const log = { info: () => {}, warn: (obj: object, msg?: string) => warns.push({ obj, msg }) };
  const store = await RedisStore.open({ url: redis.url, prefix: "config", log });
  cleanups.push(() => store.close());
  return warns;
}

describe.skipIf(!available)("a Redis holding the state, checked when a store opens", () => {
  it("says nothing when it persists each write and never evicts", async () => {
    expect(await warningsOpening(async () => {})).toEqual([]);
  });

  it("warns once per risk: no append-only file, and keys evicted when full", async () => {
    const warns = await warningsOpening(async (admin) => {
      await admin.config("SET", "appendonly", "no");
      await admin.config("SET", "maxmemory", "100mb");
      await admin.config("SET", "maxmemory-policy", "allkeys-lru");
    });
    expect(warns.map((w) => w.msg)).toEqual([
      expect.stringMatching(/^Redis runs without its append-only file \(appendonly no\).*Set appendonly yes/),
      expect.stringMatching(/^Redis may evict keys .*\(maxmemory-policy allkeys-lru\).*noeviction$/),
    ]);
    expect(warns[1]?.obj).toMatchObject({ policy: "allkeys-lru" });
  });
});
