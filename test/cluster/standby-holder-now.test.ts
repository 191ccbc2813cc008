/**
 * A standby bot names the instance holding its lease from the moment this instance finds the lease
 * taken (its acquisition or its renewal refused), not from the next round of leases; and while no
 * round read the leases for longer than the ttl, its status says why: a read that failed (Redis),
 * or this instance's own rounds running late (its process held up, Redis answering). A real Daemon
 * with a LeaseCoordinator on Redis (skipped when none answers), bots on a sandbox over HTTP; the
 * lease taken through a TCP proxy that holds the instance's command while the test takes it, and
 * the lateness through the coordinator's clock moved on, as a blocked event loop leaves it.
 */

import { Redis } from "ioredis";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { type FreezableProxy, startProxy } from "../support/cluster.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`standby holder now: ${noRedisMessage}`);

const idle = { events: ["message"], setup() {} } as unknown as BotDefinition<never, never>;
const LATE =
  /^this instance's lease rounds are running late \(the last one read the leases \d+ s ago\): the process is starved of CPU or its event loop is blocked, and no instance is known to run it\. Once a round runs, it shows which instance runs it, or this one takes it$/;
const FAILED =
  /^the leases could not be read for \d+ s \(is Redis reachable\?\): no instance is known to run it\. Once Redis answers, a round of leases shows which instance runs it, or this one takes it$/;

let sandbox: Sandbox;
let prefix: string;
let direct: Redis;
let proxy: FreezableProxy;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  prefix = uniquePrefix("holder-now");
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: "b0-bot@sandbox.example",
    full_name: "Bot 0",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  direct = new Redis(redisUrl);
  proxy = await startProxy(redisUrl);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  await proxy.close();
  direct.disconnect();
  await sandbox.stop();
  await dropPrefix(prefix);
});

/** Instance "here" running b0 through the proxy, with leases of `ttlMs`, its lease clock `now`. */
async function instance(ttlMs: number, now?: () => number) {
  const store = await RedisStore.open({ url: proxy.url, prefix, commandTimeoutMs: 200 });
  const coordinator = new LeaseCoordinator({
    store,
    bots: ["b0"],
    ttlMs,
    handoverDeadlineMs: 500,
    log: pino({ level: "silent" }),
    instanceId: "here",
    ...(now && { now }),
  });
  const d = await startInProcessDaemon(
    sandbox,
    { b0: { email: "b0-bot@sandbox.example", definition: idle } },
    { store, coordinator, global: "shutdown_timeout: 2s" },
  );
  cleanups.push(async () => {
    await d.stop({ deadlineMs: 0 });
    await store.close();
  });
  const status = async () => (await d.daemon.status()).bots.find((b) => b.name === "b0");
  return { status, dialogs: () => dialogDesk(d.daemon.bots, coordinator).dialogs("b0"), coordinator };
}

/** Another instance takes b0's lease. */
const takeLease = () => direct.set(`${prefix}#lease:b0`, "999:elsewhere", "PX", 60_000);

describe.skipIf(!reachable)("a bot whose lease another instance holds", () => {
  it("names that instance once its acquisition was refused, before the next round", async () => {
    // The first round reads b0 free; its acquisition reaches Redis after the lease was taken.
    proxy.holdNext(`#lease-token:b0\r\n$4\r\nhere\r\n`, takeLease);
    // Rounds every 10 s: the next one, which would read the holder, comes long after the test.
    const here = await instance(30_000);
    expect(await here.status()).toMatchObject({ state: "standby", leaseHolder: "elsewhere" });
    expect(await here.dialogs()).toEqual([
      { bot: "b0", dialogs: [], elsewhere: true, leaseHolder: "elsewhere" },
    ]);
  });

  it("names that instance once its renewal was refused, before the next round", async () => {
    // Rounds every second: the second one's renewal is refused, the third reads the holder.
    const ttlMs = 3_000;
    const here = await instance(ttlMs);
    expect(await here.status()).toMatchObject({ state: "running" });
    const value = (await direct.get(`${prefix}#lease:b0`))!;
    // The renewal (the ttl, then the lease's value) reaches Redis after the lease was taken.
    proxy.holdNext(`${ttlMs}\r\n$${value.length}\r\n${value}\r\n`, takeLease);
    // The first status read that finds it on standby names the holder: not a round later.
    let bot = await here.status();
    const state = async () => {
      bot = await here.status();
      return bot?.state;
    };
    await expect.poll(state, { timeout: 10_000, interval: 20 }).toBe("standby");
    expect(bot).toMatchObject({ state: "standby", leaseHolder: "elsewhere" });
  });

  it("says this instance's rounds run late when they do, not that Redis is out of reach", async () => {
    await takeLease();
    let offset = 0;
    // Rounds every 10 s: none runs while the test reads the status.
    const here = await instance(30_000, () => performance.now() + offset);
    expect(await here.status()).toMatchObject({ state: "standby", leaseHolder: "elsewhere" });
    // The event loop held up for 40 s (as the clock sees it): no round ran, none failed.
    offset = 40_000;
    const bot = await here.status();
    expect(bot).toMatchObject({ state: "standby", reason: expect.stringMatching(LATE) });
    expect(bot?.leaseHolder).toBeUndefined();
    expect(await here.dialogs()).toEqual([
      { bot: "b0", dialogs: [], elsewhere: true, leasesUnread: true, leasesLate: true },
    ]);
  });

  it("says the leases could not be read when Redis refuses, late rounds or not", async () => {
    await takeLease();
    let offset = 0;
    const here = await instance(1_000, () => performance.now() + offset);
    expect(await here.status()).toMatchObject({ state: "standby", leaseHolder: "elsewhere" });
    // Its port closed: the next round's read fails, and so do the ones after it.
    await proxy.close();
    await expect
      .poll(async () => (await here.status())?.reason, { timeout: 10_000, interval: 50 })
      .toMatch(FAILED);
    // A round overdue besides (the process held up): a read failed, and that is what is said.
    offset = 40_000;
    expect((await here.status())?.reason).toMatch(FAILED);
    expect(await here.dialogs()).toEqual([{ bot: "b0", dialogs: [], elsewhere: true, leasesUnread: true }]);
  });
});
