/**
 * Which replicas a write waits for (redis-replication.ts), on real redis-servers: replicas are told
 * apart by address, one that came online since the last count is waited for, and one that left
 * stops being waited for only while most Sentinels name the primary the connection reaches. Each
 * test sets how often the replicas are counted, so what a count could have seen is decided by the
 * test, not by timing. Needs `redis-server` on PATH.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { Replication } from "../../src/state/redis-replication.ts";
import { freePort, hasRedisServer } from "../support/cluster.ts";
import {
  MASTER_NAME,
  onlineReplicasOf,
  replicasInStep,
  type SentinelTopology,
  startReplicatedRedis,
  startSentinelTopology,
} from "../support/sentinel.ts";

const available = hasRedisServer();
if (!available)
  console.warn(
    "state redis-replication: redis-server is not on PATH (apt-get install redis-server): Redis tests skipped",
  );

/** A count interval no test outlives: only the count at connect and the WAITs' own count run. */
const NEVER_MS = 3_600_000;
const RECONNECTING = "the Sentinels name another primary than the one this connection reaches; reconnecting";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function topology(): Promise<SentinelTopology> {
  const redis = await startSentinelTopology();
  cleanups.push(() => redis.stop());
  return redis;
}

/** A connection straight to `port`, its writes confirmed on the replicas; `warnings`: what it logged. */
async function connect(
  port: number,
  options: { waitMs: number; countEveryMs: number; sentinels?: string[] },
): Promise<{
  client: Redis;
  replication: Replication;
  warnings: string[];
  write(key: string): Promise<void>;
}> {
  const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, retryStrategy: () => 50 });
  client.on("error", () => {});
  const warnings: string[] = [];
  const replication = new Replication(client, {
    waitForReplica: true,
    waitMs: options.waitMs,
    role: "test",
    countEveryMs: options.countEveryMs,
    log: { warn: (_obj, msg) => void warnings.push(String(msg)) },
    ...(options.sentinels ? { sentinel: { sentinels: options.sentinels, name: MASTER_NAME } } : {}),
  });
  cleanups.push(async () => client.disconnect());
  await client.connect();
  const write = async (key: string) => {
    await client.set(key, "1");
    await replication.confirm("a write");
  };
  return { client, replication, warnings, write };
}

/**
 * Resolves once `write(key)` is confirmed, trying again while it is not: what holds on a machine
 * loaded enough that a WAIT outlasts its bound.
 */
const confirmedSoon = (write: (key: string) => Promise<void>, key: string) =>
  expect
    .poll(
      () =>
        write(key).then(
          () => true,
          () => false,
        ),
      { timeout: 15_000 },
    )
    .toBe(true);

// The inner waits (a replica killed, revived and back in step) add up to 40 s under load.
describe.skipIf(!available)("which replicas a write waits for", { timeout: 60_000 }, () => {
  it("waits for a replica that came online since the replicas were last counted", async () => {
    const redis = await topology();
    const primary = await redis.primaryPort();
    const [late] = await redis.replicaPorts();
    redis.signal(late!, "SIGKILL");
    await expect.poll(() => onlineReplicasOf(primary), { timeout: 10_000, interval: 50 }).toBe(1);
    const { write } = await connect(primary, { waitMs: 500, countEveryMs: NEVER_MS });
    await confirmedSoon(write, "one replica");
    // Back after the connection's only count: a write it does not have does not count, since it
    // could be the replica promoted next.
    await redis.revive(late!);
    await expect.poll(() => onlineReplicasOf(primary), { timeout: 20_000, interval: 50 }).toBe(2);
    redis.signal(late!, "SIGSTOP");
    cleanups.push(async () => redis.signal(late!, "SIGCONT"));
    await expect(write("late replica silent")).rejects.toMatchObject({
      code: "STATE_UNAVAILABLE",
      message: expect.stringContaining("fewer than all 2 replicas confirmed it within 500 ms"),
    });
    redis.signal(late!, "SIGCONT");
    await expect.poll(() => write("late replica back").then(() => true), { timeout: 10_000 }).toBe(true);
  });

  it("tells replicas apart by address: one leaving as another comes is still waited for", async () => {
    const redis = await topology();
    const primary = await redis.primaryPort();
    const { write } = await connect(primary, { waitMs: 500, countEveryMs: NEVER_MS });
    await confirmedSoon(write, "two replicas");
    const [gone] = await redis.replicaPorts();
    redis.signal(gone!, "SIGKILL");
    await expect.poll(() => onlineReplicasOf(primary), { timeout: 10_000, interval: 50 }).toBe(1);
    await redis.revive(await freePort());
    await expect.poll(() => onlineReplicasOf(primary), { timeout: 20_000, interval: 50 }).toBe(2);
    // The newcomer in step, so that the write below is refused for the replica gone, not for a
    // newcomer slow to acknowledge its first writes.
    await expect.poll(() => replicasInStep(primary), { timeout: 10_000, interval: 50 }).toBe(true);
    // Two replicas online, as before, but not the same two: the one gone may be the one the
    // Sentinels promote (a graceful failover's first step), so two confirmations do not count.
    // On a loaded machine the newcomer may still miss the bound of a first write (refused as
    // "fewer than all 2"): writes are tried until one is refused naming all 3; none may count.
    let refused = "";
    for (let i = 0; i < 10 && !refused.includes("all 3"); i++) {
      const outcome = await write(`a newcomer and one other ${i}`).then(
        () => ({ code: "CONFIRMED", message: "" }),
        (err: { code: string; message: string }) => err,
      );
      expect(outcome).toMatchObject({ code: "STATE_UNAVAILABLE" });
      refused = outcome.message;
    }
    expect(refused).toContain("fewer than all 3 replicas confirmed it within 500 ms");
  });

  it("stops waiting for a replica gone from two counts while most Sentinels name the primary", async () => {
    const redis = await topology();
    const primary = await redis.primaryPort();
    const { write, warnings } = await connect(primary, {
      waitMs: 300,
      countEveryMs: 200,
      sentinels: redis.sentinels,
    });
    await confirmedSoon(write, "two replicas");
    const [gone] = await redis.replicaPorts();
    redis.signal(gone!, "SIGKILL");
    await confirmedSoon(write, "one replica left");
    expect(warnings).not.toContain(RECONNECTING);
  });

  it("keeps waiting for a replica gone from a primary the Sentinels do not name, and reconnects", async () => {
    const redis = await topology();
    const other = await startReplicatedRedis(2);
    cleanups.push(() => other.stop());
    // Straight to a primary the topology's Sentinels do not name: what a connection left on a
    // replaced primary sees (still writable, a replica still attached).
    const { client, write, warnings } = await connect(other.primary, {
      waitMs: 300,
      countEveryMs: 200,
      sentinels: redis.sentinels,
    });
    await confirmedSoon(write, "two replicas");
    let reconnects = 0;
    client.on("ready", () => reconnects++);
    other.kill(other.replicas[0]!);
    await expect.poll(() => onlineReplicasOf(other.primary), { timeout: 10_000, interval: 50 }).toBe(1);
    // Each count that misses the replica asks the Sentinels, finds they name another primary,
    // drops the connection and leaves the count as it was.
    await expect.poll(() => reconnects, { timeout: 15_000, interval: 50 }).toBeGreaterThanOrEqual(3);
    expect(warnings).toContain(RECONNECTING);
    const outcomes = await Promise.all(
      ["a", "b", "c"].map((k) =>
        write(`stale ${k}`).then(
          () => "confirmed",
          (err: { code?: string }) => err.code,
        ),
      ),
    );
    expect(outcomes).toEqual(["STATE_UNAVAILABLE", "STATE_UNAVAILABLE", "STATE_UNAVAILABLE"]);
  });
});
