/**
 * The Redis store and the lease coordinator through Sentinel, on a primary, two replicas and three
 * Sentinels of the test's own: writes count only once a replica has them, a failover is followed
 * to the new primary (and counted), and a bot stops when its lease renewals cannot be confirmed.
 * Needs `redis-server` on PATH.
 */
import { Redis } from "ioredis";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { CoordinatorHooks } from "../../src/cluster/coordinator.ts";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { RETRY_CHECK_MS, retryWatcherFor } from "../../src/daemon/retry-watcher.ts";
import { stateLocation } from "../../src/daemon/server-check.ts";
import type { ReplicationSink } from "../../src/state/redis-replication.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import type { SentinelTarget } from "../../src/state/redis-url.ts";
import { primaryByMajority, runIdOf } from "../../src/state/sentinel-vote.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { freePort, hasRedisServer } from "../support/cluster.ts";
import { MASTER_NAME, type SentinelTopology, startSentinelTopology } from "../support/sentinel.ts";

const available = hasRedisServer();
if (!available)
  console.warn(
    "cluster sentinel: redis-server is not on PATH (apt-get install redis-server): Redis tests skipped",
  );

const log = pino({ level: "silent" });
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function topology(): Promise<{ redis: SentinelTopology; target: SentinelTarget }> {
  const redis = await startSentinelTopology();
  cleanups.push(() => redis.stop());
  return { redis, target: { sentinels: redis.sentinels, name: MASTER_NAME } };
}

async function open(target: SentinelTarget, replicaWaitMs?: number): Promise<RedisStore> {
  const store = await RedisStore.open({
    url: target,
    prefix: "sentinel",
    commandTimeoutMs: 5_000,
    ...(replicaWaitMs !== undefined ? { replicaWaitMs } : {}),
  });
  cleanups.push(() => store.close());
  return store;
}

/** A sink that records what it was told. */
function recording(): ReplicationSink & { failovers: string[]; waits: boolean[] } {
  const failovers: string[] = [];
  const waits: boolean[] = [];
  return { failovers, waits, failover: (p) => failovers.push(p), waited: (_s, ok) => waits.push(ok) };
}

describe.skipIf(!available)("Redis through Sentinel", () => {
  // A failover first waits for the Sentinels to see both replicas (up to 30 s under load: they
  // learn of replicas from INFO every 10 s), then polls up to 20 s for the new primary.
  it("confirms writes on a replica, follows a failover to the new primary, and counts it", {
    timeout: 60_000,
  }, async () => {
    const { redis, target } = await topology();
    const store = await open(target);
    const sink = recording();
    store.replication.report(sink);
    const before = await redis.primaryPort();
    // The Sentinels answering, once the first check is back (sentinels-reached.test.ts).
    const { sentinelsReached, ...status } = store.redisStatus();
    expect(status).toEqual({
      primary: `127.0.0.1:${before}`,
      sentinel: { name: MASTER_NAME, sentinels: redis.sentinels },
      failovers: 0,
      replicaConfirmed: true,
    });
    if (sentinelsReached) expect(sentinelsReached).toMatchObject({ answered: 3, of: 3, needed: 2 });
    // Concurrent writes share their WAITs; every one of them is confirmed.
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.set(`k${i}`, i)));
    expect(sink.waits).toHaveLength(50);
    expect(sink.waits.every(Boolean)).toBe(true);

    const { to } = await redis.failover();
    // Writes go on, on the new primary, and what was confirmed before is there.
    await expect
      .poll(() => store.set("after", 1).then(() => store.redisStatus().primary), { timeout: 20_000 })
      .toBe(`127.0.0.1:${to}`);
    expect(await store.get("k49")).toBe(49);
    expect(store.redisStatus().failovers).toBe(1);
    expect(sink.failovers).toEqual([`127.0.0.1:${to}`]);
  });

  it("refuses to count a write no replica confirms", async () => {
    const { redis, target } = await topology();
    const store = await open(target, 300);
    await store.set("before", 1);
    // The replicas stop acknowledging: the primary takes the write, nothing confirms it.
    const replicas = await redis.replicaPorts();
    for (const port of replicas) redis.signal(port, "SIGSTOP");
    cleanups.push(async () => {
      for (const port of replicas) redis.signal(port, "SIGCONT");
    });
    await expect(store.set("unconfirmed", 1)).rejects.toMatchObject({
      code: "STATE_UNAVAILABLE",
      message: expect.stringMatching(/(no replica|fewer than all 2 replicas) confirmed it within 300 ms/),
    });
    for (const port of replicas) redis.signal(port, "SIGCONT");
    await expect.poll(() => store.set("later", 1).then(() => true), { timeout: 10_000 }).toBe(true);
  });

  it("names the primary most Sentinels name, by run id, before and after a failover", {
    timeout: 60_000,
  }, async () => {
    const { redis, target } = await topology();
    const runIdAt = async (port: number) => {
      const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await client.connect();
        return runIdOf(await client.info("server"));
      } finally {
        client.disconnect();
      }
    };
    expect(await primaryByMajority(target, 1_000)).toBe(await runIdAt(await redis.primaryPort()));
    const { to } = await redis.failover();
    await expect.poll(() => primaryByMajority(target, 1_000), { timeout: 15_000 }).toBe(await runIdAt(to));
    // No Sentinel answers: no majority.
    const closed = { ...target, sentinels: [`127.0.0.1:${await freePort()}`] };
    expect(await primaryByMajority(closed, 500)).toBeUndefined();
  });

  it("is located as Redis (as a URL is), so another instance's retry request is watched for", async () => {
    const { target } = await topology();
    const store = await open(target);
    const where = stateLocation(store);
    expect(where).toEqual({ redis: target, prefix: "sentinel" });
    // The 2 s read of the retry requests `bothost failed retry` writes through another instance.
    const clock = new TestClock({ held: true });
    const watcher = retryWatcherFor(store, clock, log);
    const unwatch = watcher.watch("approvals", 0, () => {});
    expect(clock.pendingDelays()).toContain(RETRY_CHECK_MS);
    unwatch();
    watcher.stop();
  });

  it("stops a bot whose lease renewals no replica confirms", async () => {
    const { redis, target } = await topology();
    const store = await open(target);
    const events: string[] = [];
    const hooks: CoordinatorHooks = {
      run: async (bots) => void events.push(...bots.map((b) => `run ${b}`)),
      halt: async (bot) => void events.push(`halt ${bot}`),
    };
    const ttlMs = 1_500;
    const c = new LeaseCoordinator({ store, bots: ["solo"], ttlMs, handoverDeadlineMs: 100, log });
    await c.start(hooks);
    cleanups.push(() => c.stop(async () => {}));
    // On a loaded machine the first round's WAIT can time out before the fresh replicas answer;
    // the next round takes the lease then.
    await expect.poll(() => events, { timeout: 10_000, interval: 20 }).toEqual(["run solo"]);
    const replicas = await redis.replicaPorts();
    for (const port of replicas) redis.signal(port, "SIGSTOP");
    cleanups.push(async () => {
      for (const port of replicas) redis.signal(port, "SIGCONT");
    });
    // Redis itself is up and renews the key; only the replicas are silent.
    await expect.poll(() => events, { timeout: 10_000, interval: 20 }).toEqual(["run solo", "halt solo"]);
    expect(c.held).toEqual([]);
  });
});
