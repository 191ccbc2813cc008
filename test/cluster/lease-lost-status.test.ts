/**
 * An instance that loses a bot's lease (Redis out of reach past the lease's validity) stops the
 * bot: `bothost status` says the lease was lost, why, and what comes next (`leaseLost` in JSON,
 * state `stopped`), and exits 1, as the bot runs nowhere known; once Redis answers and the bot
 * runs again, the reason is gone and the status exits 0. Needs `redis-server` on PATH (the test
 * runs its own, to stop it).
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { hasRedisServer, startInstance, useOwnRedisCluster } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available)
  console.warn(
    "cluster lease-lost status: redis-server is not on PATH (apt-get install redis-server): skipped",
  );

const startCluster = useOwnRedisCluster();

const REASON =
  "lease lost: its lease could not be renewed in time (is Redis reachable?); stopped here, it runs nowhere known. Once Redis answers, this instance takes the lease again, or stands by if another instance holds it";

describe.skipIf(!available)("a bot whose lease was lost", () => {
  it("its status says so and what comes next, and status exits 1 until it runs again", {
    timeout: 90_000,
  }, async () => {
    const { redis, config } = await startCluster({ prefix: "lease-lost", ttl: "3s" });
    const instance = await startInstance(config);
    expect(instance.started).toBe(1);
    const status = (json: boolean) =>
      runCli(["status", "--config", config.file, ...(json ? ["--json"] : [])], { env: config.env });

    await redis.down();
    await instance.proc.waitForLog(
      (l) =>
        l.msg ===
        "lease lost: the bot stopped here until its lease is taken again (here or on another instance), by the instance that takes over the events left in flight",
      20_000,
    );
    const json = await status(true);
    expect(json.code, json.stderr).toBe(1);
    const bot = (JSON.parse(json.stdout) as { bots: Record<string, unknown>[] }).bots[0];
    expect({ state: bot?.state, leaseLost: bot?.leaseLost, reason: bot?.reason }).toEqual({
      state: "stopped",
      leaseLost: true,
      reason: REASON,
    });
    const text = await status(false);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`\nb0: ${REASON}\n`);

    await redis.up();
    await instance.proc.waitForLog(
      (l) => l.msg === "lease acquired; starting the bot on this instance",
      20_000,
    );
    await expect
      .poll(
        async () => (JSON.parse((await status(true)).stdout) as { bots: { state: string }[] }).bots[0]?.state,
        {
          timeout: 30_000,
        },
      )
      .toBe("running");
    const after = await status(true);
    expect(after.code).toBe(0);
    const again = (JSON.parse(after.stdout) as { bots: Record<string, unknown>[] }).bots[0];
    expect([again?.leaseLost, again?.reason]).toEqual([undefined, undefined]);
  });
});
