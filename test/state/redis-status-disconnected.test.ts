/**
 * A Redis store's status tells a connection that is down from one that is up: while its Redis is
 * stopped, `redisStatus()` (the Redis line of `bothost status` and `/status`) says `disconnected`,
 * and no longer once it is back. On a redis-server of the test's own (skipped without one on PATH).
 */
import { afterEach, describe, expect, it } from "vitest";
import { RedisStore } from "../../src/state/redis-store.ts";
import { hasRedisServer, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("redis status while disconnected: redis-server is not on PATH: skipped");

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!available)("the Redis status of a store whose Redis stops", () => {
  it("says disconnected while it is down, and not once it is back", async () => {
    const redis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const store = await RedisStore.open({ url: redis.url, prefix: "status-down", commandTimeoutMs: 1_000 });
    cleanups.push(() => store.close());
    const port = new URL(redis.url).port;
    expect(store.redisStatus()).toEqual({
      primary: `127.0.0.1:${port}`,
      failovers: 0,
      replicaConfirmed: false,
    });
    await redis.down();
    await expect.poll(() => store.redisStatus().disconnected, { timeout: 10_000 }).toBe(true);
    expect(store.redisStatus().primary).toBe(`127.0.0.1:${port}`);
    await redis.up();
    await expect.poll(() => store.redisStatus().disconnected, { timeout: 10_000 }).toBeUndefined();
  });
});
