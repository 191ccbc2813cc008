/**
 * A command in flight when the Redis connection closes fails at once, saying so, instead of
 * waiting out its whole command timeout (ioredis drops such commands unsettled when it does not
 * resend them); a connection ioredis gives up on by itself connects again. Needs `redis-server`
 * on PATH (the test runs its own, to restart it).
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { closeRedis, connectRedis } from "../../src/state/redis-connection.ts";
import { hasRedisServer, type OwnRedis, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("redis-unanswered: redis-server is not on PATH: skipped");

let redis: OwnRedis | undefined;

/** How many clients the Redis at `url` holds in a blocking command now (INFO clients). */
async function blockedClients(url: string): Promise<number> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await probe.connect();
    return Number(/blocked_clients:(\d+)/.exec(await probe.info("clients"))?.[1]);
  } catch {
    return 0;
  } finally {
    probe.disconnect();
  }
}
afterEach(async () => {
  await redis?.stop();
  redis = undefined;
});

describe.skipIf(!available)("a command in flight when Redis restarts", () => {
  it("fails with 'the connection closed', not a command timeout", async () => {
    redis = await startOwnRedis();
    for (const offlineQueue of [true, false]) {
      const client = await connectRedis({
        target: redis.url,
        role: "test",
        offlineQueue,
        commandTimeoutMs: 20_000,
      });
      try {
        // Sent and parked on the server: it is in flight when the server goes.
        const blocked = client.blpop("nothing-comes", 0).then(
          () => "answered",
          (err: Error) => err.message,
        );
        await expect.poll(() => blockedClients(redis!.url), { timeout: 10_000 }).toBe(1);
        await redis.restart(200);
        expect(await blocked).toMatch(/^the connection closed before Redis answered/);
        await expect.poll(() => client.status, { timeout: 10_000 }).toBe("ready");
        expect(await client.ping()).toBe("PONG");
      } finally {
        client.disconnect();
      }
    }
  }, 60_000);
});

describe.skipIf(!available)("a connection ioredis ends by itself", () => {
  it("connects again", async () => {
    redis = await startOwnRedis();
    const client = await connectRedis({
      target: redis.url,
      role: "test",
      offlineQueue: true,
      commandTimeoutMs: 5_000,
    });
    try {
      // ioredis ends a client whose connector is closed while it connects (through Sentinel: a
      // `+switch-master` arriving while it asks the Sentinels for the primary).
      const connector = (client as unknown as { connector: { disconnect(): void } }).connector;
      client.once("connecting", () => connector.disconnect());
      const ended = new Promise((resolve) => client.once("end", resolve));
      client.disconnect(true);
      await ended;
      await expect.poll(() => client.status, { timeout: 10_000 }).toBe("ready");
      expect(await client.ping()).toBe("PONG");
    } finally {
      await closeRedis(client, "quit");
    }
    await expect.poll(() => client.status, { timeout: 10_000 }).toBe("end");
  }, 30_000);
});
