/**
 * A holder whose own process was frozen past its lease's validity (SIGSTOP then SIGCONT, a stopped
 * VM, a blocked event loop) says so when its bot stops: Redis answered all along, and the reason
 * does not ask whether it is reachable. The freeze is the event loop blocked in-process; real Redis.
 */
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { deferred } from "../support/deferred.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`lease-thawed-holder: ${noRedisMessage}`);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!reachable)("a holder thawed past its lease", () => {
  it("names its own pause as the reason, not Redis", async () => {
    const prefix = uniquePrefix("thawed");
    cleanups.push(() => dropPrefix(prefix));
    const lines: { msg: string; reason?: string }[] = [];
    const log = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const store = await RedisStore.open({ url: redisUrl, prefix, commandTimeoutMs: 1_000 });
    cleanups.push(() => store.close());
    // Roomy enough that a loaded machine renews in time before the freeze.
    const ttlMs = 1_500;
    const c = new LeaseCoordinator({
      store,
      bots: ["solo"],
      ttlMs,
      handoverDeadlineMs: 100,
      log,
      instanceId: "a",
    });
    const halted = deferred();
    const running = deferred();
    await c.start({
      run: async () => running.resolve(),
      halt: async () => halted.resolve(),
    });
    cleanups.push(() => c.stop(async () => {}));
    await running.promise;
    // Frozen for the whole validity window and past it (ttl·2/3, then ttl/6 more): no timer runs.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ttlMs);
    await halted.promise;
    await expect
      .poll(() => lines.find((l) => l.reason !== undefined)?.reason)
      .toMatch(/^this process was paused/);
  });
});
