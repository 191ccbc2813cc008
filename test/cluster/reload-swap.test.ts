/**
 * A reload swaps a bot's runtime (the old one halted, the new one added in its place) while lease
 * rounds go on. What the instance says of the bot stays true throughout:
 * - a round halting or starting the bot in the moment of the swap logs no failure ("did not stop
 *   cleanly", "bot failed to start"): the reload's new runtime starts if the lease is held here
 *   once it is added, else stands by;
 * - a round winning the bot while the reload stops its old runtime does not start that old one
 *   again (it would run beside the new one, out of the daemon's sight);
 * - after the reload, a bot whose lease was lost here is `stopped` with `leaseLost`, as before it;
 * - a bot handed over to balance the instances never names this instance as its holder;
 * - a bot whose lease goes elsewhere while it waits for its turn to start (registration_concurrency)
 *   is not started by the reload.
 * A real Daemon with a LeaseCoordinator on Redis (skipped when none answers), bots on a sandbox
 * over HTTP. The swap is held open by a handler of the other bot, which the reload waits for, or
 * by the daemon's store flush, the last step of stopping a runtime.
 */
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { startProxy } from "../support/cluster.ts";
import { deferred } from "../support/deferred.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`reload swap: ${noRedisMessage}`);

const MEMBER = "member@sandbox.example";
const STOPPED_ELSEWHERE = "the bot stopped here: another instance runs it";
const LOST_ELSEWHERE =
  "lease lost: the bot stopped here; instance there runs it and takes over the events left in flight";
const STOPPED_LOST =
  "lease lost: the bot stopped here until its lease is taken again (here or on another instance), by the instance that takes over the events left in flight";
const SWAPPING = "a reload swaps the bot's runtime: the reload starts it";

let sandbox: Sandbox;
let prefix: string;
let direct: Redis;
let gate: ReturnType<typeof deferred>;
let entered: ReturnType<typeof deferred>;
const cleanups: (() => Promise<unknown>)[] = [];

// b1 answers nothing until the gate opens: a reload halting it waits for that handler.
const holding = {
  events: ["message"],
  setup(bot: BotApi) {
    bot.on("message", async () => {
      entered.resolve();
      await gate.promise;
    });
  },
} as unknown as BotDefinition<never, never>;
const idle = { events: ["message"], setup() {} } as unknown as BotDefinition<never, never>;
const loaded = [
  { name: "b0", definition: idle, settings: undefined },
  { name: "b1", definition: holding, settings: undefined },
];
const restartBoth = { add: [], remove: [], restart: ["b0", "b1"], keep: [], needRestart: [] };

beforeEach(async () => {
  [gate, entered] = [deferred(), deferred()];
  prefix = uniquePrefix("reload-swap");
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  for (const [n, channels] of [
    ["0", []],
    ["1", ["general"]],
  ] as const)
    sandbox.control.createUser({
      email: `b${n}-bot@sandbox.example`,
      full_name: `Bot ${n}`,
      bot: "generic",
      owner: "owner@sandbox.example",
      channels: [...channels],
    });
  direct = new Redis(redisUrl);
});
afterEach(async () => {
  gate.resolve();
  flushHeld?.gate.resolve();
  flushHeld = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  direct.disconnect();
  await sandbox.stop();
  await dropPrefix(prefix);
});

/** A lease coordinator's log lines, into `logs`. */
function logInto(logs: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  return pino({ level: "debug" }, sink);
}

/** While set, the daemon's flushes (a runtime's last step of stopping) wait for it. */
let flushHeld: { flushing: ReturnType<typeof deferred>; gate: ReturnType<typeof deferred> } | undefined;

/** The store as the daemon gets it: Redis, its flushes held while {@link flushHeld} is set. */
function heldFlushes(store: RedisStore): RedisStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === "flush")
        return async () => {
          const held = flushHeld;
          held?.flushing.resolve();
          await held?.gate.promise;
          return target.flush();
        };
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** This instance ("here"), running b0 and b1 on Redis at `url` with leases of `ttlMs`. */
async function instance(url = redisUrl, ttlMs = 1_500, global = ""): Promise<InProcessDaemon> {
  const logs: Record<string, unknown>[] = [];
  const store = await RedisStore.open({ url, prefix, commandTimeoutMs: 1_000 });
  const coordinator = new LeaseCoordinator({
    store,
    bots: ["b0", "b1"],
    ttlMs,
    handoverDeadlineMs: 1_000,
    log: logInto(logs),
    instanceId: "here",
  });
  const d = await startInProcessDaemon(
    sandbox,
    {
      b0: { email: "b0-bot@sandbox.example", definition: idle },
      b1: { email: "b1-bot@sandbox.example", definition: holding },
    },
    { store: heldFlushes(store), coordinator, logs, global: `shutdown_timeout: 60s\n${global}` },
  );
  cleanups.push(() => d.stop({ deadlineMs: 0 }));
  return d;
}

/** The first log line `pick` matches, once it is written. */
async function logLine(d: InProcessDaemon, pick: (l: Record<string, unknown>) => boolean) {
  await expect.poll(() => d.logs.some(pick), { timeout: 20_000, interval: 20 }).toBe(true);
  return d.logs.find(pick)!;
}

/**
 * A reload restarting both bots, held after b0's old runtime is halted for good and before its new
 * one is added: b1's halt (after b0's) has begun, it waits for b1's handler.
 */
async function heldReload(d: InProcessDaemon) {
  sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "hold" });
  await entered.promise;
  const reloading = d.daemon.applyReload(d.daemon.config, restartBoth, loaded);
  reloading.catch(() => {}); // awaited by the test; refused at its cleanup should it fail first
  const b1 = () => d.daemon.bots.find((b) => b.name === "b1")?.status.state;
  await expect.poll(b1, { interval: 5 }).toBe("reloading");
  return { reloading }; // not the promise itself: an async function would wait for it
}

const statusOf = async (d: InProcessDaemon, bot: string) =>
  (await d.daemon.status()).bots.find((b) => b.name === bot);

describe.skipIf(!reachable)("a lease round in the moment a reload swaps a bot's runtime", () => {
  it("halting the bot (its lease taken elsewhere) logs it stopped, not that it did not stop cleanly", async () => {
    const d = await instance();
    expect(d.report.started.sort()).toEqual(["b0", "b1"]);
    const { reloading } = await heldReload(d);
    await direct.set(`${prefix}#lease:b0`, "9:there", "PX", 60_000);
    const said = await logLine(
      d,
      (l) => l.bot === "b0" && (l.msg === LOST_ELSEWHERE || l.msg === "the bot did not stop cleanly"),
    );
    expect(said.msg).toBe(LOST_ELSEWHERE);
    gate.resolve();
    expect((await reloading).failed).toEqual([]);
    expect(await statusOf(d, "b0")).toMatchObject({ state: "standby", leaseHolder: "there" });
  });

  it("starting the bot (its lease won) logs no start failure; the reload starts it, once", async () => {
    await direct.set(`${prefix}#lease:b0`, "9:there", "PX", 60_000);
    const d = await instance();
    expect(d.report.started).toEqual(["b1"]);
    const { reloading } = await heldReload(d);
    await direct.del(`${prefix}#lease:b0`);
    const said = await logLine(
      d,
      (l) => l.bot === "b0" && (l.msg === SWAPPING || l.msg === "bot failed to start"),
    );
    expect(said.msg).toBe(SWAPPING);
    gate.resolve();
    expect((await reloading).failed).toEqual([]);
    await expect.poll(async () => (await statusOf(d, "b0"))?.state, { timeout: 20_000 }).toBe("running");
    expect(d.logged("bot failed to start")).toEqual([]);
    expect(sandbox.control.queues().filter((q) => q.email === "b0-bot@sandbox.example")).toHaveLength(1);
  });

  it("starting the bot while the reload stops its old runtime starts the new one alone", async () => {
    await direct.set(`${prefix}#lease:b0`, "9:there", "PX", 60_000);
    const d = await instance();
    expect(d.report.started).toEqual(["b1"]);
    const old = d.daemon.bots.find((b) => b.name === "b0")!;
    flushHeld = { flushing: deferred(), gate: deferred() };
    const reloading = d.daemon.applyReload(d.daemon.config, { ...restartBoth, restart: ["b0"] }, loaded);
    reloading.catch(() => {});
    await flushHeld.flushing.promise; // the old runtime's stop is at its last step, held
    await direct.del(`${prefix}#lease:b0`);
    await logLine(d, (l) => l.bot === "b0" && l.msg === "lease acquired; starting the bot on this instance");
    flushHeld.gate.resolve();
    expect((await reloading).failed).toEqual([]);
    await expect.poll(async () => (await statusOf(d, "b0"))?.state, { timeout: 20_000 }).toBe("running");
    expect(old.status.queueId).toBeNull(); // the old runtime, dropped by the reload, registered none
    expect(sandbox.control.queues().filter((q) => q.email === "b0-bot@sandbox.example")).toHaveLength(1);
  });
});

describe.skipIf(!reachable)("a lease round while a reload starts the bots one at a time", () => {
  it("a bot whose lease went elsewhere while it waited for its turn is not started", async () => {
    const d = await instance(redisUrl, 1_500, "registration_concurrency: 1");
    expect(d.report.started.sort()).toEqual(["b0", "b1"]);
    // b0's new runtime registers first and is held there: b1's waits for its turn.
    sandbox.control.delay(600_000, { paths: ["/register"] });
    const reloading = d.daemon.applyReload(d.daemon.config, restartBoth, loaded);
    reloading.catch(() => {});
    await expect.poll(() => sandbox.control.delayed(), { timeout: 20_000 }).toBe(1);
    await direct.set(`${prefix}#lease:b1`, "9:there", "PX", 60_000);
    await logLine(d, (l) => l.bot === "b1" && l.msg === LOST_ELSEWHERE);
    sandbox.control.delay(0);
    expect((await reloading).failed).toEqual([]);
    expect(await statusOf(d, "b1")).toMatchObject({ state: "standby", queueId: null });
    expect(sandbox.control.queues().filter((q) => q.email === "b1-bot@sandbox.example")).toEqual([]);
    expect(sandbox.control.queues().filter((q) => q.email === "b0-bot@sandbox.example")).toHaveLength(1);
  });
});

describe.skipIf(!reachable)("cluster status after a reload", () => {
  it("a bot whose lease was lost here is stopped with leaseLost, not on standby", async () => {
    const proxy = await startProxy(redisUrl);
    cleanups.push(() => proxy.close());
    const d = await instance(proxy.url);
    expect(d.report.started.sort()).toEqual(["b0", "b1"]);
    proxy.freeze();
    await logLine(d, (l) => l.bot === "b0" && l.msg === STOPPED_LOST);
    const report = await d.daemon.applyReload(d.daemon.config, { ...restartBoth, restart: ["b0"] }, loaded);
    expect(report.failed).toEqual([]);
    const b0 = await statusOf(d, "b0");
    expect({ state: b0?.state, leaseLost: b0?.leaseLost, holder: b0?.leaseHolder }).toEqual({
      state: "stopped",
      leaseLost: true,
      holder: undefined,
    });
  });

  it("a bot handed over to balance the instances never names this instance as its holder", async () => {
    const d = await instance(redisUrl, 3_000);
    expect(d.report.started.sort()).toEqual(["b0", "b1"]);
    const store = await RedisStore.open({ url: redisUrl, prefix, commandTimeoutMs: 1_000 });
    cleanups.push(() => store.close());
    const there = new LeaseCoordinator({
      store,
      bots: ["b0", "b1"],
      ttlMs: 3_000,
      handoverDeadlineMs: 1_000,
      log: pino({ level: "silent" }),
      instanceId: "there",
    });
    await there.start({ run: async () => {}, halt: async () => {} });
    cleanups.push(() => there.stop(async () => {}));
    const handed = await logLine(d, (l) => l.msg === STOPPED_ELSEWHERE);
    const bot = String(handed.bot);
    const status = await statusOf(d, bot);
    expect(status?.state).toBe("standby");
    expect(status?.leaseHolder).not.toBe("here");
    await expect.poll(async () => (await statusOf(d, bot))?.leaseHolder, { timeout: 20_000 }).toBe("there");
  });
});
