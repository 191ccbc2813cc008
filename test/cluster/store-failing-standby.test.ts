/**
 * A bot whose writes failed during a Redis outage, then taken by another instance: on the
 * instance where it is now on standby, `bothost_state_store_failing` says 0, as `/readyz` does
 * (a standby bot writes nothing there; the failure it met before it moved is no longer true).
 * The first instance is frozen (SIGSTOP) while Redis comes back, so that the other one takes the
 * bot. The lease (20 s) outlives the write's tries through the outage (about 10 s), so the failure
 * is met while the bot still runs there: with a short lease the bot stops for its lost lease
 * first, and a run the stop leaves records nothing, its failure included. Needs `redis-server` on
 * PATH (the test runs its own, to stop it).
 */
import { describe, expect, it } from "vitest";
import { hasRedisServer, readyzState, startInstance, useOwnRedisCluster } from "../support/cluster.ts";
import { send } from "../support/e2e-daemon.ts";
import { parsePrometheus, sampleValue } from "../support/prometheus-text.ts";

const available = hasRedisServer();
if (!available) console.warn("cluster store-failing-standby: redis-server is not on PATH: skipped");

const startCluster = useOwnRedisCluster();

const failing = async (url: string) =>
  sampleValue(parsePrometheus(await (await fetch(`${url}/metrics`)).text()), "bothost_state_store_failing", {
    bot: "b0",
  });

describe.skipIf(!available)("a bot that moved after its writes failed", () => {
  it("is not reported failing on the instance where it is on standby", { timeout: 120_000 }, async () => {
    const { redis, sandbox, config } = await startCluster({ prefix: "failing-standby", ttl: "20s" });
    const first = await startInstance(config);
    expect(first.started).toBe(1);
    const second = await startInstance(config);
    expect(second.standby).toEqual(["b0"]);

    await redis.down();
    send(sandbox, "task during the outage");
    await expect.poll(() => failing(first.url), { timeout: 20_000 }).toBe(1);

    first.proc.kill("SIGSTOP");
    await redis.up();
    await expect.poll(() => readyzState(second.url), { timeout: 45_000 }).toBe("polling");
    first.proc.kill("SIGCONT");
    await expect.poll(() => readyzState(first.url), { timeout: 30_000 }).toBe("standby");
    expect(await failing(first.url)).toBe(0);
  });
});
