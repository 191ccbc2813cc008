/**
 * Once the lease connection is ready again after renewals failed, the leases are renewed (and
 * free bots taken) at once, not at the next try, `ttl/12` later: an outage that ended in time
 * costs no lease. The rounds here fail on Redis's refusal (the live-instance set made another
 * type), the next try 5 s away; the connection is then cut and comes back within milliseconds,
 * and the round runs before that try. On a redis-server of the test's own: the cut drops every
 * connection to it.
 */
import { Redis } from "ioredis";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { hasRedisServer, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("lease-renew-on-ready: redis-server is not on PATH: skipped");

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!available)("the lease connection ready again", () => {
  it("runs a round at once, before the next try", async () => {
    const redis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const prefix = "ready";
    const direct = new Redis(redis.url);
    cleanups.push(async () => direct.disconnect());
    // Every heartbeat fails until this key is a sorted set again.
    await direct.set(`${prefix}#instances`, "not a sorted set");
    const store = await RedisStore.open({ url: redis.url, prefix, commandTimeoutMs: 1_000 });
    cleanups.push(() => store.close());
    const log = pino({ level: "silent" });
    // Renewals every 20 s, tried again every 5 s while they fail.
    const c = new LeaseCoordinator({ store, bots: ["solo"], ttlMs: 60_000, handoverDeadlineMs: 100, log });
    const ran: string[] = [];
    await c.start({ run: async (bots) => void ran.push(...bots), halt: async () => {} });
    cleanups.push(() => c.stop(async () => {}));
    expect(ran).toEqual([]);
    await direct.del(`${prefix}#instances`);
    // The connections drop; ioredis reconnects in 50 ms, far inside the 5 s to the next try.
    await direct.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
    await expect.poll(() => ran, { timeout: 2_000 }).toEqual(["solo"]);
  });
});
