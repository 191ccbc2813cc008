/**
 * An instance of this host whose process is gone (a kill -9) leaves its leases to be taken at the
 * next round of another instance, not once they expire; any other holder keeps its lease until
 * then. The dead instance is written into Redis as a real one would be (its lease, its membership,
 * the process it said it is), its pid that of a child process that has exited; the live one is a
 * real LeaseCoordinator against a real Redis, its ttl far longer than the test.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { thisProcess } from "../../src/cluster/gone-holders.ts";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { isZombie, startTicks } from "../../src/state/proc-identity.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { assertBuilt, repoRoot } from "../support/cli.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const reachable = await redisReachable();
const self = await thisProcess();
if (!reachable) console.warn(`gone-holders: ${noRedisMessage}`);
else if (self === undefined) console.warn("gone-holders: skipped: /proc does not say which process this is");

const TTL_MS = 60_000;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** The pid and start of a process that has exited (and been reaped). */
async function exitedProcess(): Promise<{ pid: number; ticks: number }> {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 10_000)"], { stdio: "ignore" });
  await once(child, "spawn");
  const pid = child.pid!;
  const ticks = (await startTicks(pid))!;
  child.kill("SIGKILL");
  await once(child, "exit");
  return { pid, ticks };
}

/**
 * The pid and start of a process killed whose parent does not reap it: `sh` starts it, then
 * becomes a `sleep` that never waits for children, so it stays a zombie (state Z in /proc).
 */
async function zombieProcess(): Promise<{ pid: number; ticks: number }> {
  const parent = spawn("sh", ["-c", "sleep 30 & echo $!; exec sleep 30"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  cleanups.push(async () => parent.kill("SIGKILL"));
  const [line] = (await once(parent.stdout!, "data")) as [Buffer];
  const pid = Number(line.toString().trim());
  const ticks = (await startTicks(pid))!;
  process.kill(pid, "SIGKILL");
  await expect.poll(() => isZombie(pid), { timeout: 2_000, interval: 10 }).toBe(true);
  return { pid, ticks };
}

/** `self` (boot|ns|uid|pid|start) with other fields. */
function procWith(change: { boot?: string; pid?: number; ticks?: number }): string {
  const [boot, ns, uid, pid, ticks] = self!.split("|");
  return [change.boot ?? boot, ns, uid, change.pid ?? pid, change.ticks ?? ticks].join("|");
}

/**
 * Redis as an instance `dead` left it: a member of the live set for the whole ttl, saying it is
 * `proc`, holding the lease of each of `holds` (token 5).
 */
async function leftBy(direct: Redis, prefix: string, dead: string, proc: string, holds: string[]) {
  const until = Date.now() + TTL_MS;
  await direct.zadd(`${prefix}#instances`, until, dead);
  await direct.hset(`${prefix}#procs`, dead, proc);
  for (const bot of holds) {
    await direct.set(`${prefix}#lease-token:${bot}`, "5");
    await direct.set(`${prefix}#lease:${bot}`, `5:${dead}`, "PX", TTL_MS);
  }
}

/** A LeaseCoordinator `live` for `bots`, started: the bots it runs go to `ran`. */
async function live(prefix: string, bots: string[], ran: string[]) {
  const store = await RedisStore.open({ url: redisUrl, prefix, commandTimeoutMs: 1_000 });
  cleanups.push(() => store.close());
  const log = pino({ level: "silent" });
  const c = new LeaseCoordinator({
    store,
    bots,
    ttlMs: TTL_MS,
    handoverDeadlineMs: 100,
    log,
    instanceId: "live",
  });
  await c.start({ run: async (started) => void ran.push(...started), halt: async () => {} });
  cleanups.push(() => c.stop(async () => {}));
  return c;
}

describe.skipIf(!reachable || self === undefined)("a lease held by a process of this host", () => {
  async function setUp(label: string) {
    const prefix = uniquePrefix(label);
    cleanups.push(() => dropPrefix(prefix));
    const direct = new Redis(redisUrl);
    cleanups.push(async () => direct.disconnect());
    return { prefix, direct };
  }

  it("that is gone is taken at the first round, with a larger token, and the dead instance leaves the live set", async () => {
    const { prefix, direct } = await setUp("gone-holder");
    const gone = await exitedProcess();
    await leftBy(direct, prefix, "dead", procWith(gone), ["b0", "b1"]);
    const ran: string[] = [];
    const c = await live(prefix, ["b0", "b1"], ran);
    expect(c.held.sort()).toEqual(["b0", "b1"]);
    expect(ran.sort()).toEqual(["b0", "b1"]);
    expect(await direct.get(`${prefix}#lease:b0`)).toBe("6:live");
    expect(await direct.zrange(`${prefix}#instances`, 0, -1)).toEqual(["live"]);
    expect(await direct.hkeys(`${prefix}#procs`)).toEqual(["live"]);
  });

  it("that is gone and held no lease leaves the live set, so the live instance takes every bot", async () => {
    const { prefix, direct } = await setUp("gone-idle");
    await leftBy(direct, prefix, "dead", procWith(await exitedProcess()), []);
    const c = await live(prefix, ["b0", "b1"], []);
    // Counted live, the dead instance would leave the live one its share: one bot of two.
    expect(c.held.sort()).toEqual(["b0", "b1"]);
    expect(await direct.zrange(`${prefix}#instances`, 0, -1)).toEqual(["live"]);
  });

  it("killed but not yet reaped by its parent (a zombie) is gone", async () => {
    const { prefix, direct } = await setUp("zombie-holder");
    await leftBy(direct, prefix, "dead", procWith(await zombieProcess()), ["b0"]);
    const c = await live(prefix, ["b0"], []);
    expect(c.held).toEqual(["b0"]);
    expect(await direct.get(`${prefix}#lease:b0`)).toBe("6:live");
  });

  it("that still runs keeps its lease: the bot stands by", async () => {
    const { prefix, direct } = await setUp("live-holder");
    // This very process, under another instance id: alive.
    await leftBy(direct, prefix, "other", self!, ["b0"]);
    const c = await live(prefix, ["b0"], []);
    expect(c.held).toEqual([]);
    expect(c.holderOf("b0")).toBe("other");
    expect(await direct.get(`${prefix}#lease:b0`)).toBe("5:other");
  });

  it("of another boot (another host, or before a reboot) keeps its lease until it expires", async () => {
    const { prefix, direct } = await setUp("other-boot");
    const gone = await exitedProcess();
    await leftBy(direct, prefix, "elsewhere", procWith({ ...gone, boot: "another-boot" }), ["b0"]);
    const c = await live(prefix, ["b0"], []);
    expect(c.held).toEqual([]);
    expect(await direct.get(`${prefix}#lease:b0`)).toBe("5:elsewhere");
  });

  it("whose pid a later process took is gone", async () => {
    const { prefix, direct } = await setUp("pid-reused");
    // This process's pid, with a start before it: the process that had it is gone.
    const [, , , pid, ticks] = self!.split("|");
    await leftBy(direct, prefix, "before", procWith({ pid: Number(pid), ticks: Number(ticks) - 1 }), ["b0"]);
    const c = await live(prefix, ["b0"], []);
    expect(c.held).toEqual(["b0"]);
  });

  it("that still runs is not taken for gone by an instance out of file descriptors", async () => {
    // An instance whose reads of /proc fail (EMFILE here) cannot tell the holder gone: a real
    // process, its open files limited to 40, asks of this live one once it has used them all up.
    assertBuilt();
    const module = path.join(repoRoot, "dist/cluster/gone-holders.js");
    const script = `
      import { openSync } from "node:fs";
      const { goneHere, thisProcess } = await import(${JSON.stringify(module)});
      const self = await thisProcess();
      try { for (;;) openSync("/dev/null", "r"); } catch (err) { if (err.code !== "EMFILE") throw err; }
      console.log(await goneHere(process.argv[1], self));`;
    const { stdout } = await promisify(execFile)("sh", [
      "-c",
      'ulimit -n 40 && exec "$0" --input-type=module -e "$1" "$2"',
      process.execPath,
      script,
      self!,
    ]);
    expect(stdout.trim()).toBe("false");
  });
});
