/**
 * A standby bot names the instance holding its lease from the moment this instance finds the lease
 * taken (its acquisition or its renewal refused), not from the next round of leases. A real Daemon
 * with a LeaseCoordinator on Redis (skipped when none answers), bots on a sandbox over HTTP; the
 * lease taken through a TCP proxy that holds the instance's command while the test takes it.
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

/** Instance "here" running b0 through the proxy, with leases of `ttlMs`. */
async function instance(ttlMs: number) {
  const store = await RedisStore.open({ url: proxy.url, prefix, commandTimeoutMs: 200 });
  const coordinator = new LeaseCoordinator({
    store,
    bots: ["b0"],
    ttlMs,
    handoverDeadlineMs: 500,
    log: pino({ level: "silent" }),
    instanceId: "here",
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
});
