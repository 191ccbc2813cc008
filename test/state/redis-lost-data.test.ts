/**
 * Redis coming back from an outage without bothost's keys (restarted without persistence, or
 * flushed) is said in one error line, since each bot then starts afresh without a word; a
 * reconnection that finds the keys says nothing of the kind. On a redis-server of the test's own
 * (skipped without one on PATH).
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisStore } from "../../src/state/redis-store.ts";
import { hasRedisServer, startOwnRedis } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("redis lost data: redis-server is not on PATH: skipped");

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

interface Line {
  level: string;
  obj: object;
  msg: string | undefined;
}

async function setUp() {
  const redis = await startOwnRedis();
  cleanups.push(() => redis.stop());
  const lines: Line[] = [];
  const at = (level: string) => (obj: object, msg?: string) => lines.push({ level, obj, msg });
  const log = { info: at("info"), warn: at("warn"), error: at("error") };
  const store = await RedisStore.open({ url: redis.url, prefix: "lost", commandTimeoutMs: 2_000, log });
  cleanups.push(() => store.close());
  const admin = new Redis(redis.url, { lazyConnect: true });
  await admin.connect();
  cleanups.push(() => admin.quit());
  await store.set("cursor", 41);
  return { store, admin, lines };
}

const restored = (lines: Line[]) => lines.some((l) => l.msg === "redis connection restored");

describe.skipIf(!available)("a Redis that comes back without bothost's keys", () => {
  it("is told in one error line naming the prefix and the fix, and the store goes on", async () => {
    const { store, admin, lines } = await setUp();
    await admin.flushall();
    await admin.call("CLIENT", "KILL", "TYPE", "normal").catch(() => {});
    await expect.poll(() => lines.filter((l) => l.level === "error").length, { timeout: 10_000 }).toBe(1);
    const [line] = lines.filter((l) => l.level === "error");
    expect(line?.obj).toMatchObject({ prefix: "lost" });
    expect(line?.msg).toMatch(/without bothost's keys.*appendonly yes/);
    await expect.poll(() => admin.exists("lost#indexed"), { timeout: 5_000 }).toBe(1);
    expect(await store.get("cursor")).toBeUndefined();
    await store.set("cursor", 42);
    expect(await store.list("")).toEqual([{ key: "cursor", value: 42 }]);
  });

  it("says nothing of the kind when Redis comes back with them", async () => {
    const { store, admin, lines } = await setUp();
    await admin.call("CLIENT", "KILL", "TYPE", "normal").catch(() => {});
    await expect.poll(() => restored(lines), { timeout: 10_000 }).toBe(true);
    expect(await store.get("cursor")).toBe(41);
    expect(lines.filter((l) => l.level === "error")).toEqual([]);
  });
});
