/**
 * Redis stopped and started again (same port, its append-only file kept) while two instances run
 * and messages keep coming: the store reads back whole, the bot goes on, every message is answered
 * once. Needs `redis-server` on PATH (the test runs its own, to be able to restart it).
 */
import { describe, expect, it } from "vitest";
import { RedisStore } from "../../src/state/redis-store.ts";
import { bookings, hasRedisServer, startInstance, useOwnRedisCluster } from "../support/cluster.ts";
import { answerCounts, replies, send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available)
  console.warn("cluster redis-restart: redis-server is not on PATH (apt-get install redis-server): skipped");

const startCluster = useOwnRedisCluster();

describe.skipIf(!available)("Redis restarted mid-run", () => {
  // Two instances through a Redis restart, its waits 90 s in all: above the 20 s default.
  it("loses and corrupts nothing; the bot resumes and answers every message once", {
    timeout: 120_000,
  }, async () => {
    const { redis, sandbox, config } = await startCluster({ prefix: "restart", ttl: "4s" });
    const first = await startInstance(config);
    const second = await startInstance(config);
    expect([first.started + second.started, [...first.standby, ...second.standby]]).toEqual([1, ["b0"]]);
    await expect.poll(() => bookings(sandbox, "Daily cluster note").pending, { timeout: 15_000 }).toBe(1);

    const ids: number[] = [];
    for (let i = 0; i < 30; i++) {
      if (i === 10) {
        await expect.poll(() => replies(sandbox).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(5);
        await redis.restart();
      }
      ids.push(send(sandbox, `task ${i}`));
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    await expect
      .poll(() => [...answerCounts(sandbox, ids).values()].filter((n) => n === 0).length, {
        timeout: 30_000,
      })
      .toBe(0);
    // A few more after things settled: the bot is still running somewhere.
    const later = [send(sandbox, "task later 1"), send(sandbox, "task later 2")];
    await expect
      .poll(() => [...answerCounts(sandbox, later).values()].every((n) => n === 1), { timeout: 30_000 })
      .toBe(true);
    expect([...answerCounts(sandbox, [...ids, ...later])].filter(([, n]) => n !== 1)).toEqual([]);
    expect(bookings(sandbox, "Daily cluster note")).toEqual({ pending: 1, created: 1 });

    // Both instances saw the outage (their connections dropped) and came back.
    for (const instance of [first, second]) {
      expect(instance.proc.logs().some((l) => l.msg === "redis connection restored")).toBe(true);
    }
    for (const instance of [first, second]) instance.proc.kill("SIGTERM");
    expect(await first.proc.exited).toEqual({ code: 0, signal: null });
    expect(await second.proc.exited).toEqual({ code: 0, signal: null });
    // The shared state reads back: the cursor covers every message, no handled-marks are left over.
    const store = await RedisStore.open({ url: redis.url, prefix: "restart" });
    try {
      const runtime = store.namespace("b0").namespace("runtime");
      expect(await runtime.get("cursor")).toBeGreaterThanOrEqual(Math.max(...later));
      expect(await runtime.list("handled:")).toEqual([]);
      expect((await store.namespace("b0").namespace("bookings").list()).map((e) => e.key)).toEqual(["daily"]);
    } finally {
      await store.close();
    }
  });
});
