/**
 * An effect whose claim is confirmed only after the instance's lease ran out, on real
 * redis-servers: a primary and one replica, every write confirmed on the replica (as through
 * Sentinel), the replica stopped while the claims' WAITs wait on it. Seen in the Sentinel e2e on a
 * loaded machine: an instance whose event loop stalled past its lease's validity read its claims'
 * confirmations before its lease timer fired, and sent; the instance that had taken the bot over
 * had read those claims back at once (made before its start), and a read-back made before the old
 * holder's send landed would send again. Each instance has a connection of its own, as two
 * daemons do. Needs `redis-server` on PATH.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { EffectRecords } from "../../src/effects/effect-records.ts";
import { type FenceSource, RedisStore } from "../../src/state/redis-store.ts";
import { realClock } from "../../src/time/clock.ts";
import { hasRedisServer } from "../support/cluster.ts";
import { startReplicatedRedis } from "../support/sentinel.ts";

const available = hasRedisServer();
if (!available)
  console.warn(
    "effects effect-claim-fenced: redis-server is not on PATH (apt-get install redis-server): Redis tests skipped",
  );

const PREFIX = "claim-fenced";
const LEASE = `${PREFIX}#lease:b0`;
/** Where the first effect of event `m:1` is recorded (see _keys.ts). */
const RECORD = `${PREFIX}:b0/effects/m:1#1`;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!available)("an effect's claim", () => {
  it("confirmed after the lease ran out begins no effect: the instance that took the bot over makes it, once", async () => {
    const redis = await startReplicatedRedis(1);
    cleanups.push(() => redis.stop());
    const [replica] = redis.replicas as [number];
    const raw = new Redis({ port: redis.primary, host: "127.0.0.1" });
    cleanups.push(async () => raw.disconnect());
    await raw.set(LEASE, "1:a", "PX", 60_000);

    /** The server's messages: a read-back finds the send once one was made. */
    const sent: string[] = [];
    const send = (who: string) => ({
      act: async () => {
        sent.push(who);
        return { id: sent.length };
      },
      verify: async () => (sent.length > 0 ? { id: 1 } : undefined),
    });
    /**
     * An instance holding the bot's lease with `value` while its validity lasts (on the monotonic
     * clock, as LeaseCoordinator counts it), its bot started now.
     */
    const instance = async (value: string) => {
      // Every write waits for the replica, and long enough to outlast the stop below.
      const store = await RedisStore.open({
        url: `redis://127.0.0.1:${redis.primary}/0`,
        prefix: PREFIX,
        replicaWaitMs: 10_000,
      });
      cleanups.push(() => store.close());
      const lease = { validUntil: Number.POSITIVE_INFINITY };
      const fence: FenceSource = {
        current: () => (performance.now() < lease.validUntil ? { key: LEASE, value } : undefined),
        description: 'bot "b0"',
      };
      const since = realClock.now();
      const records = new EffectRecords(store.fenced(fence).namespace("b0").namespace("effects"), {
        ttlMs: 60_000,
        clock: realClock,
        commit: () => store.commit(),
        since: () => since,
      });
      return { lease, records };
    };
    const a = await instance("1:a");

    // A's claim lands while it holds the lease; its confirmation waits on the stopped replica.
    redis.signal(replica, "SIGSTOP");
    cleanups.push(async () => redis.signal(replica, "SIGCONT"));
    const made = a.records.run("m:1", false).once("send", send("a"));
    await expect.poll(() => raw.get(RECORD), { timeout: 5_000, interval: 20 }).not.toBeNull();
    const claimed = await raw.get(RECORD);

    // A's lease runs out here meanwhile, and B takes the bot over: it reads A's claim back (nothing
    // was sent) and claims the send itself, its confirmation waiting on the replica too.
    a.lease.validUntil = performance.now();
    await raw.set(LEASE, "2:b", "PX", 60_000);
    const b = await instance("2:b");
    const replayed = b.records.run("m:1", true).once("send", send("b"));
    await expect.poll(() => raw.get(RECORD), { timeout: 5_000, interval: 20 }).not.toBe(claimed);

    // Both confirmations come back: only B, which holds the lease, sends.
    redis.signal(replica, "SIGCONT");
    await Promise.allSettled([made, replayed]);
    expect(sent).toEqual(["b"]);
    await expect(made).rejects.toMatchObject({ code: "STATE_FENCED" });
    await expect(replayed).resolves.toEqual({ id: 1 });
  }, 30_000);
});
