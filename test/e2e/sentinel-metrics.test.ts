/**
 * `/metrics` of a daemon on Redis through Sentinel: `bothost_redis_failovers_total` is there at 0
 * for both connections from the start, so that an alert on its `increase()` sees the first
 * failover, and counts that failover. Needs `redis-server` on PATH.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, killAll } from "../support/cli.ts";
import { clusterOrg, hasRedisServer, startInstance, writeClusterConfig } from "../support/cluster.ts";
import { startE2eSandbox } from "../support/e2e-daemon.ts";
import { MASTER_NAME, startSentinelTopology } from "../support/sentinel.ts";

const available = hasRedisServer();
if (!available)
  console.warn("e2e sentinel-metrics: redis-server is not on PATH (apt-get install redis-server): skipped");

const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(() => {
  if (available) assertBuilt();
});
afterEach(async () => {
  await killAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

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
    const redis = await startSentinelTopology();
    cleanups.push(() => redis.stop());
    const sandbox = await startE2eSandbox(clusterOrg());
    cleanups.push(() => sandbox.stop());
    const config = await writeClusterConfig(sandbox, {
      redis: { sentinels: redis.sentinels, name: MASTER_NAME },
      prefix: "sentinel-metrics",
      ttl: "3s",
    });
    cleanups.push(() => config.cleanup());
    const instance = await startInstance(config);
    expect(await failovers(instance.url)).toEqual({ state: 0, leases: 0 });

    await redis.failover();
    await expect
      .poll(() => failovers(instance.url), { timeout: 30_000, interval: 200 })
      .toEqual({ state: 1, leases: 1 });
  }, 120_000);
});
