/**
 * `ctx.report` whose claim the replicas do not confirm in time: Redis took the claim, bothost
 * counts the write as failed, and the server was never called. The handler's next run reports
 * the message, once, instead of taking that claim for an earlier run's report (which never
 * happened: the moderators saw nothing, and the moderation bot told the sender they did). Real
 * primary, two replicas and three Sentinels; needs `redis-server` on PATH.
 */
import { describe, expect, it } from "vitest";
import { hasRedisServer, reportsPerMessage, startInstance } from "../support/cluster.ts";
import { answerCounts, send } from "../support/e2e-daemon.ts";
import { useSentinelCluster } from "../support/sentinel-cluster.ts";

const available = hasRedisServer();
if (!available)
  console.warn("e2e sentinel-report: redis-server is not on PATH (apt-get install redis-server): skipped");

const startCluster = useSentinelCluster();

describe.skipIf(!available)("a report whose claim the replicas did not confirm", () => {
  it("is made by the handler's next run, once", async () => {
    const { redis, sandbox, config, opened } = await startCluster({ prefix: "sentinel-report", ttl: "15s" });
    const instance = await startInstance(config);
    const warmup = send(sandbox, "task warm-up");
    await expect.poll(() => answerCounts(sandbox, [warmup]).get(warmup), { timeout: 30_000 }).toBe(1);

    // The replicas stop reading: the primary applies the claim, no replica confirms it.
    const replicas = await redis.replicaPorts();
    for (const port of replicas) redis.signal(port, "SIGSTOP");
    opened(async () => {
      for (const port of replicas) redis.signal(port, "SIGCONT");
    });
    const id = send(sandbox, "task 1 spam");
    await instance.proc.waitForLog(
      (l) => l.messageId === id && /state store outage/.test(String(l.msg)),
      30_000,
    );
    expect(reportsPerMessage(sandbox).get(id)).toBeUndefined();
    for (const port of replicas) redis.signal(port, "SIGCONT");

    await expect.poll(() => answerCounts(sandbox, [id]).get(id), { timeout: 60_000 }).toBe(1);
    expect(reportsPerMessage(sandbox).get(id)).toBe(1);
  }, 120_000);
});
