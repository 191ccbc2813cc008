/**
 * LeaseCoordinator against a real Redis: the partition rule (an instance cut off from Redis stops
 * its bots while its lease is still alive in Redis, and another takes them only after it expired),
 * fenced writes of the stale holder, and sharing bots out between instances.
 */
import { Redis } from "ioredis";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { CoordinatorHooks } from "../../src/cluster/coordinator.ts";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { leaseTiming } from "../../src/cluster/lease-parts.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { type FreezableProxy, startProxy } from "../support/cluster.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`lease-coordinator: ${noRedisMessage}`);

const log = pino({ level: "silent" });
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** Hooks that record what the coordinator asked for, in one shared order. */
function recorder(name: string, events: string[], onHalt?: (bot: string) => Promise<void>): CoordinatorHooks {
  return {
    run: async (bots) => {
      for (const bot of bots) events.push(`${name} run ${bot}`);
    },
    halt: async (bot, deadlineMs) => {
      events.push(`${name} halt ${bot} within ${deadlineMs}`);
      await onHalt?.(bot);
    },
  };
}

async function coordinator(url: string, prefix: string, bots: string[], ttlMs: number, name: string) {
  const store = await RedisStore.open({ url, prefix, commandTimeoutMs: 1_000 });
  const c = new LeaseCoordinator({ store, bots, ttlMs, handoverDeadlineMs: 100, log, instanceId: name });
  cleanups.push(() => store.close());
  return { store, c };
}

/**
 * Resolves once each of `instances` has run `rounds` more whole rounds: a round starts with the
 * instance's heartbeat (its score in `<prefix>#instances` moves on), so `rounds + 1` heartbeats
 * seen after the call. Heartbeats missed between two reads only make the wait longer.
 */
async function afterRounds(direct: Redis, prefix: string, instances: string[], rounds: number) {
  const score = (id: string) => direct.zscore(`${prefix}#instances`, id);
  const last = new Map<string, string | null>();
  const seen = new Map<string, number>();
  for (const id of instances) {
    last.set(id, await score(id));
    seen.set(id, 0);
  }
  const fewest = async () => {
    for (const id of instances) {
      const now = await score(id);
      if (now !== null && now !== last.get(id)) seen.set(id, seen.get(id)! + 1);
      last.set(id, now);
    }
    return Math.min(...seen.values());
  };
  await expect.poll(fewest, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(rounds + 1);
}

describe.skipIf(!reachable)("LeaseCoordinator", () => {
  it("an instance cut off from Redis stops its bot before its lease expires; the other takes it after", async () => {
    const prefix = uniquePrefix("partition");
    cleanups.push(() => dropPrefix(prefix));
    const proxy: FreezableProxy = await startProxy(redisUrl);
    cleanups.push(() => proxy.close());
    const direct = new Redis(redisUrl);
    cleanups.push(async () => direct.disconnect());
    const ttlMs = 1_500;
    const events: string[] = [];
    const leaseKey = `${prefix}#lease:solo`;
    let atHalt: { value: string | null; pttl: number } | undefined;

    const a = await coordinator(proxy.url, prefix, ["solo"], ttlMs, "inst-a");
    await a.c.start(
      recorder("a", events, async () => {
        atHalt = { value: await direct.get(leaseKey), pttl: await direct.pttl(leaseKey) };
      }),
    );
    cleanups.push(() => a.c.stop(async () => {}));
    expect(events).toEqual(["a run solo"]);
    // The first lease's token: the counter begins at Redis's clock (redis-leases.ts).
    const first = String(await direct.get(leaseKey));
    expect(first).toMatch(/^\d{13}:inst-a$/);
    const token = Number(first.split(":")[0]);
    const aState = a.c.storeFor("solo").namespace("solo");
    await aState.set("written-by", "a");

    const b = await coordinator(redisUrl, prefix, ["solo"], ttlMs, "inst-b");
    await b.c.start(recorder("b", events));
    cleanups.push(() => b.c.stop(async () => {}));
    expect(events).toEqual(["a run solo"]); // b is the spare

    proxy.freeze();
    await expect.poll(() => events.length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(3);
    // a stopped its bot (handlers aborted within ttl/6) while Redis still had a's lease alive…
    expect(events).toEqual([
      "a run solo",
      `a halt solo within ${leaseTiming(ttlMs).haltDeadlineMs}`,
      "b run solo",
    ]);
    expect(atHalt?.value).toBe(first);
    expect(atHalt?.pttl).toBeGreaterThan(0);
    // …and b took it only after Redis expired it, with a larger fencing token.
    expect(await direct.get(leaseKey)).toBe(`${token + 1}:inst-b`);
    expect(b.c.held).toEqual(["solo"]);
    expect(a.c.held).toEqual([]);

    // The stale holder's writes are refused; the new holder's go through.
    proxy.thaw();
    await expect(aState.set("written-by", "a-again")).rejects.toMatchObject({ code: "STATE_FENCED" });
    await b.c.storeFor("solo").namespace("solo").set("written-by", "b");
    expect(await direct.get(`${prefix}:solo/written-by`)).toBe('"b"');
    // Once it can reach Redis again (two whole rounds of each), a does not take the bot back.
    await afterRounds(direct, prefix, ["inst-a", "inst-b"], 2);
    expect([a.c.held, b.c.held]).toEqual([[], ["solo"]]);
  });

  it("a spare cut off from Redis for more than a ttl names no holder: its lease may have expired since", async () => {
    const prefix = uniquePrefix("unread-holder");
    cleanups.push(() => dropPrefix(prefix));
    const proxy: FreezableProxy = await startProxy(redisUrl);
    cleanups.push(() => proxy.close());
    const ttlMs = 1_500;
    const events: string[] = [];
    const a = await coordinator(redisUrl, prefix, ["solo"], ttlMs, "inst-a");
    await a.c.start(recorder("a", events));
    cleanups.push(() => a.c.stop(async () => {}));
    const b = await coordinator(proxy.url, prefix, ["solo"], ttlMs, "inst-b");
    await b.c.start(recorder("b", events));
    cleanups.push(() => b.c.stop(async () => {}));
    expect([b.c.holderOf("solo"), b.c.leasesUnread()]).toEqual(["inst-a", undefined]);

    // b reads nothing more: what it last read of a's lease is past its ttl, a's renewals unseen.
    proxy.freeze();
    await expect.poll(() => b.c.holderOf("solo"), { timeout: 10_000, interval: 20 }).toBeUndefined();
    // Its reads failed (timed out): Redis's doing, not this process's lateness.
    expect(b.c.leasesUnread()).toEqual({ forMs: expect.any(Number), late: false });
    expect(b.c.leasesUnread()!.forMs).toBeGreaterThan(ttlMs);
    expect(events).toEqual(["a run solo"]);
  });

  it("gives back the lease of a bot that could not start for now, and starts it again later", async () => {
    const prefix = uniquePrefix("give-back");
    cleanups.push(() => dropPrefix(prefix));
    const direct = new Redis(redisUrl);
    cleanups.push(async () => direct.disconnect());
    const { c } = await coordinator(redisUrl, prefix, ["solo"], 1_500, "a");
    const events: string[] = [];
    let tries = 0;
    await c.start({
      // The first start finds the store out of reach; the next one succeeds.
      run: async (bots) => {
        events.push(`run ${bots.join(",")}`);
        if (++tries === 1) for (const bot of bots) c.startFailed(bot, true);
      },
      halt: async (bot) => void events.push(`halt ${bot}`),
    });
    cleanups.push(() => c.stop(async () => {}));
    await expect
      .poll(() => events, { timeout: 10_000, interval: 20 })
      .toEqual(["run solo", "halt solo", "run solo"]);
    expect(c.held).toEqual(["solo"]);
    expect(await direct.get(`${prefix}#lease:solo`)).toMatch(/^\d+:a$/);
  });

  it("a bot that failed to start on every instance runs nowhere, and none tries it again", async () => {
    const prefix = uniquePrefix("refused-everywhere");
    cleanups.push(() => dropPrefix(prefix));
    const events: string[] = [];
    let fixed = false;
    const failing = (name: string, c: LeaseCoordinator): CoordinatorHooks => ({
      run: async (bots) => {
        for (const bot of bots) {
          events.push(`${name} run ${bot}`);
          if (!fixed) c.startFailed(bot, false);
        }
      },
      halt: async (bot) => void events.push(`${name} halt ${bot}`),
    });
    const a = await coordinator(redisUrl, prefix, ["x"], 1_200, "inst-a");
    await a.c.start(failing("a", a.c));
    cleanups.push(() => a.c.stop(async () => {}));
    const b = await coordinator(redisUrl, prefix, ["x"], 1_200, "inst-b");
    await b.c.start(failing("b", b.c));
    cleanups.push(() => b.c.stop(async () => {}));
    await expect.poll(() => events.length, { timeout: 10_000 }).toBe(4);
    const direct = new Redis(redisUrl);
    cleanups.push(async () => direct.disconnect());
    await afterRounds(direct, prefix, ["inst-a", "inst-b"], 3);
    expect(events).toEqual(["a run x", "a halt x", "b run x", "b halt x"]);
    expect(await direct.hgetall(`${prefix}#refusals`)).toEqual({ "inst-a": "x", "inst-b": "x" });
    expect(await direct.get(`${prefix}#lease:x`)).toBeNull();
    // A clean stop takes the instance's refusals with it; a new version lets it try the bot again.
    await b.c.stop(async () => {});
    expect(await direct.hgetall(`${prefix}#refusals`)).toEqual({ "inst-a": "x" });
    fixed = true;
    a.c.retryHere("x");
    await expect.poll(() => a.c.held, { timeout: 10_000 }).toEqual(["x"]);
    expect(events.slice(4)).toEqual(["a run x"]);
  });

  it("shares the bots out, one handover per round, and gives them all to the survivor on a clean stop", async () => {
    const prefix = uniquePrefix("share");
    cleanups.push(() => dropPrefix(prefix));
    const bots = ["b1", "b2", "b3", "b4"];
    const events: string[] = [];
    const a = await coordinator(redisUrl, prefix, bots, 1_200, "inst-a");
    await a.c.start(recorder("a", events));
    expect(a.c.held.sort()).toEqual(bots);
    const b = await coordinator(redisUrl, prefix, bots, 1_200, "inst-b");
    await b.c.start(recorder("b", events));
    cleanups.push(() => b.c.stop(async () => {}));

    await expect.poll(() => [a.c.held.length, b.c.held.length], { timeout: 15_000 }).toEqual([2, 2]);
    expect([...a.c.held, ...b.c.held].sort()).toEqual(bots);
    const handedOver = events.filter((e) => e.startsWith("a halt")).map((e) => e.split(" ")[2]);
    expect(handedOver.sort()).toEqual([...b.c.held].sort());
    expect(events.filter((e) => e.startsWith("b halt"))).toEqual([]);

    // A clean stop releases the leases at once: b runs everything well before a ttl would pass.
    let stopped = false;
    await a.c.stop(async () => {
      stopped = true;
    });
    expect(stopped).toBe(true);
    await expect.poll(() => b.c.held.length, { timeout: 10_000 }).toBe(4);
  });
  it("settles four bots on three instances as 2 + 1 + 1, moving one bot from an instance that runs two", async () => {
    const prefix = uniquePrefix("fair");
    cleanups.push(() => dropPrefix(prefix));
    const bots = ["b1", "b2", "b3", "b4"];
    const events: string[] = [];
    const instances: Awaited<ReturnType<typeof coordinator>>[] = [];
    for (const name of ["a", "b"]) {
      const inst = await coordinator(redisUrl, prefix, bots, 1_200, `inst-${name}`);
      await inst.c.start(recorder(name, events));
      cleanups.push(() => inst.c.stop(async () => {}));
      instances.push(inst);
    }
    const counts = () => instances.map((i) => i.c.held.length);
    await expect.poll(counts, { timeout: 15_000 }).toEqual([2, 2]);

    const moved = events.length;
    const c = await coordinator(redisUrl, prefix, bots, 1_200, "inst-c");
    await c.c.start(recorder("c", events));
    cleanups.push(() => c.c.stop(async () => {}));
    instances.push(c);
    await expect.poll(counts, { timeout: 15_000 }).toEqual([1, 2, 1]);
    expect(instances.flatMap((i) => i.c.held).sort()).toEqual(bots);
    // One bot moved: from a (of the two instances running two, the one with the smaller id) to c.
    const [given] = c.c.held;
    expect(events.slice(moved)).toEqual([`a halt ${given} within 100`, `c run ${given}`]);

    // Settled: a few more rounds (three whole ones of each instance) move nothing.
    const settled = events.length;
    const direct = new Redis(redisUrl);
    cleanups.push(async () => direct.disconnect());
    await afterRounds(direct, prefix, ["inst-a", "inst-b", "inst-c"], 3);
    expect(events.slice(settled)).toEqual([]);
    expect(counts()).toEqual([1, 2, 1]);
  });
});
