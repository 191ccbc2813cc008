/**
 * An instance that lost a bot's lease keeps why (`bothost status` says "lease lost") only while
 * the bot runs nowhere known: once a round sees another instance hold the lease, the bot stands
 * by naming that holder, and the lost lease is no reason to show should the bot later be stopped
 * for another. LeaseCoordinator on its own redis-server (skipped without one on PATH).
 */
import { Redis } from "ioredis";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { hasRedisServer, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("lease lost elsewhere: redis-server is not on PATH: skipped");

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!available)("a lease another instance took", () => {
  it("is no lost lease to tell once a round sees its holder", async () => {
    const redis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const direct = new Redis(redis.url);
    cleanups.push(async () => direct.disconnect());
    const store = await RedisStore.open({ url: redis.url, prefix: "elsewhere", commandTimeoutMs: 1_000 });
    cleanups.push(() => store.close());
    const log = pino({ level: "silent" });
    const c = new LeaseCoordinator({
      store,
      bots: ["solo"],
      ttlMs: 1_500,
      handoverDeadlineMs: 100,
      log,
      instanceId: "a",
    });
    await c.start({ run: async () => {}, halt: async () => {} });
    cleanups.push(() => c.stop(async () => {}));
    expect(c.held).toEqual(["solo"]);
    // Another instance's lease (as one taken while this one was cut off): a's renewal is refused.
    await direct.set("elsewhere#lease:solo", "9:b", "PX", 60_000);
    const seen = () => [c.held, c.holderOf("solo")];
    await expect.poll(seen, { timeout: 10_000, interval: 20 }).toEqual([[], "b"]);
    expect(c.lostLease("solo")).toBeUndefined();
  });
});
