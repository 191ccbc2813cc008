/**
 * A bot's lease taken again after Redis lost its keys gets a larger fencing token than the lease
 * before the loss. Before, the counter began again at 1, so the instance that had held the bot
 * got the very lease value it held before (`1:<instance>`): the release of that old lease, as its
 * halt ended, deleted the new one, and the bot's start failed on `STATE_FENCED` (with every bot
 * failed there, the daemon stopped). On a redis-server of the test's own (skipped without one).
 */
import { afterEach, describe, expect, it } from "vitest";
import { RedisLeases } from "../../src/cluster/redis-leases.ts";
import { fencingTokenOf } from "../../src/state/redis-connection.ts";
import { flushAll, hasRedisServer, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("lease token after a key loss: redis-server is not on PATH: skipped");

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!available)("a lease taken again after Redis lost its keys", () => {
  it("has a larger token, and the old lease's release leaves it in place", async () => {
    const redis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const leases = await RedisLeases.open({
      url: redis.url,
      prefix: "token-loss",
      instanceId: "a",
      ttlMs: 60_000,
    });
    cleanups.push(() => leases.close());
    const before = await leases.acquire("b0");
    if (before === undefined) throw new Error("the first lease was not acquired");
    const again = await leases.acquire("b0");
    expect(fencingTokenOf(again!)).toBe(fencingTokenOf(before) + 1);

    await flushAll(redis.url);
    // The connection killed with the flush is made again: the first acquisition after it.
    let fence: Awaited<ReturnType<RedisLeases["acquire"]>>;
    await expect.poll(async () => (fence = await leases.acquire("b0").catch(() => undefined))).toBeDefined();
    expect(fencingTokenOf(fence!)).toBeGreaterThan(fencingTokenOf(again!));
    // The halt of a lease held before the loss releases it: the one held now stays.
    await leases.release(again!);
    await leases.release(before);
    expect(await leases.renew([fence!])).toEqual(["renewed"]);
  });
});
