/**
 * `/metrics` of a daemon on Redis through Sentinel: `bothost_redis_failovers_total` is there at 0
 * for both connections from the start, so that an alert on its `increase()` sees the first
 * failover, and counts that failover. Needs `redis-server` on PATH.
 */
import { describe, expect, it } from "vitest";
import { hasRedisServer, startInstance } from "../support/cluster.ts";
import { useSentinelCluster } from "../support/sentinel-cluster.ts";

const available = hasRedisServer();
if (!available)
  console.warn("e2e sentinel-metrics: redis-server is not on PATH (apt-get install redis-server): skipped");

const startCluster = useSentinelCluster();

/** The `bothost_redis_failovers_total` series of `/metrics`, by connection. */
async function failovers(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const found: Record<string, number> = {};
  for (const m of text.matchAll(/^bothost_redis_failovers_total\{connection="(\w+)"\} (\d+)$/gm))
    found[m[1]!] = Number(m[2]);
  return found;
}

describe.skipIf(!available)("the failover counter of /metrics", () => {
  it("is at 0 for the state and leases connections from the start, then counts a failover", async () => {
    const { redis, config } = await startCluster({ prefix: "sentinel-metrics", ttl: "3s" });
    const instance = await startInstance(config);
    expect(await failovers(instance.url)).toEqual({ state: 0, leases: 0 });

    await redis.failover();
    await expect
      .poll(() => failovers(instance.url), { timeout: 30_000, interval: 200 })
      .toEqual({ state: 1, leases: 1 });
  }, 120_000);
});
