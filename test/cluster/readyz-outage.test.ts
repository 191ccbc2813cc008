/**
 * Redis out of reach for longer than a lease lasts, with one instance: the bot stops there, and
 * `/readyz` says it is not ready (state `stopped`) until Redis answers and the bot runs again; it
 * is no spare (`standby` would tell a load balancer that another instance runs it). The status
 * answers meanwhile, saying it could not read the dead letters. Needs
 * `redis-server` on PATH (the test runs its own, to stop it).
 */
import { describe, expect, it } from "vitest";
import { hasRedisServer, startInstance, useOwnRedisCluster } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available)
  console.warn("cluster readyz-outage: redis-server is not on PATH (apt-get install redis-server): skipped");

const startCluster = useOwnRedisCluster();

const readiness = async (url: string) => {
  const res = await fetch(`${url}/readyz`);
  const body = (await res.json()) as { bots: { state: string; reason?: string }[] };
  return [res.status, body.bots[0]?.state];
};

const LOST =
  "lease lost: its lease could not be renewed in time (is Redis reachable?); stopped here, it runs nowhere known. Once Redis answers, this instance takes the lease again, or stands by if another instance holds it";

describe.skipIf(!available)("Redis out of reach past the lease", () => {
  it("the bot stopped there is not ready, and is ready again once it runs", { timeout: 90_000 }, async () => {
    const { redis, config } = await startCluster({ prefix: "readyz", ttl: "3s" });
    const instance = await startInstance(config);
    expect(instance.started).toBe(1);
    await expect.poll(() => readiness(instance.url), { timeout: 15_000 }).toEqual([200, "polling"]);

    // Down until the checks below are made (past the lease: they wait for its loss), then started
    // again on the same port.
    await redis.down();
    const stopped = await instance.proc.waitForLog((l) => String(l.msg).startsWith("lease lost"), 20_000);
    expect(stopped.msg).toBe(
      "lease lost: the bot stopped here until its lease is taken again (here or on another instance), by the instance that takes over the events left in flight",
    );
    expect(await readiness(instance.url)).toEqual([503, "stopped"]);
    // Why, as the status says it: not a bare "stopped" that reads like a shutdown.
    const ready = (await (await fetch(`${instance.url}/readyz`)).json()) as { bots: { reason?: string }[] };
    expect(ready.bots[0]?.reason).toBe(LOST);
    // The status still answers, without the dead letters it cannot read.
    const status = await fetch(`${instance.url}/admin/status`);
    expect(status.status).toBe(200);
    const body = (await status.json()) as { bots: { state: string }[]; deadLettersUnread?: string };
    expect(body.bots[0]?.state).toBe("stopped");
    expect(body.deadLettersUnread).toMatch(/^the state store did not list them: /);

    await redis.up();
    await expect.poll(() => readiness(instance.url), { timeout: 30_000 }).toEqual([200, "polling"]);
    instance.proc.kill("SIGTERM");
    expect(await instance.proc.exited).toEqual({ code: 0, signal: null });
  });
});
