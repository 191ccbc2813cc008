/**
 * A heartbeat sent while the leases' connection to Redis is down fails at once (the lease keeper
 * queues nothing): its error, logged as `cannot reach Redis to renew leases`, says in words that
 * the connection is down and being made again, not ioredis's "Stream isn't writeable and
 * enableOfflineQueue options is false". On a redis-server of the test's own (skipped without one).
 */
import { afterEach, describe, expect, it } from "vitest";
import { RedisLeases } from "../../src/cluster/redis-leases.ts";
import { hasRedisServer, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("heartbeat while Redis is down: redis-server is not on PATH: skipped");

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!available)("a heartbeat while the connection to Redis is down", () => {
  it("fails with a message an operator reads: the connection is down, reconnecting", async () => {
    const redis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const leases = await RedisLeases.open({
      url: redis.url,
      prefix: "hb-down",
      instanceId: "a",
      ttlMs: 3_000,
    });
    cleanups.push(() => leases.close());
    await leases.heartbeat(["b0"]);
    await redis.down();
    const where = `redis://127.0.0.1:${new URL(redis.url).port}/0`;
    await expect
      .poll(
        async () =>
          leases.heartbeat(["b0"]).then(
            () => "answered",
            (err: Error) => err.message,
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe(
        `Redis at ${where} did not complete a heartbeat: the connection to Redis is down and being made again; the command was not sent. Check that Redis runs and is reachable.`,
      );
  });
});
