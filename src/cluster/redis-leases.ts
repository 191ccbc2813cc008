/**
 * The lease records in Redis, each operation one Lua script:
 *
 * - `<prefix>#lease:<bot>` = `<token>:<instance id>`, with a PX expiry: who runs the bot. The fence
 *   of every write the bot makes is this exact value (see RedisStore.fenced).
 * - `<prefix>#lease-token:<bot>`: the bot's fencing-token counter (INCR), never expiring, so every
 *   new lease of a bot has a larger token than any before it. Begun (or begun again, once Redis
 *   lost its keys) at Redis's clock in milliseconds: a counter begun again at 1 would hand an
 *   instance the very lease value it held before the loss, and the release of that old lease, as
 *   its halt ends, would delete the new one under the bot's start.
 * - `<prefix>#instances`: a sorted set of live instances, scored by when their membership expires
 *   (on Redis's clock), for sharing the bots out.
 * - `<prefix>#refusals`: a hash, by live instance id, of the bots that failed to start on that
 *   instance (newline-separated), which it leaves to the others; dropped with its membership.
 * - `<prefix>#procs`: a hash, by live instance id, of the process it is (gone-holders.ts), so that
 *   an instance on the same host can tell it died; dropped with its membership.
 *
 * The lease keeper has its own connection, without an offline queue: while Redis is out of
 * reach a renewal fails at once instead of waiting, and the coordinator's clock decides. Through
 * Sentinel, an acquisition or renewal counts only once a replica has it (see
 * redis-replication.ts): one the new primary might not know after a failover fails instead.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { closeRedis, connectRedis, type Fence, redisFailure } from "../state/redis-connection.ts";
import { Replication } from "../state/redis-replication.ts";
import type { RedisTarget } from "../state/redis-url.ts";

const ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current then
  local sep = string.find(current, ':', 1, true)
  if sep == nil or string.sub(current, sep + 1) ~= ARGV[1] then
    return {current, redis.call('PTTL', KEYS[1])}
  end
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local now = redis.call('TIME')
  redis.call('SET', KEYS[2], now[1] .. string.format('%03d', math.floor(now[2] / 1000)))
end
local token = redis.call('INCR', KEYS[2])
local value = token .. ':' .. ARGV[1]
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
return value
`;

/**
 * Take a lease from `ARGV[4]`, an instance that died (gone-holders.ts), only if it holds the very
 * value read (`ARGV[1]`); the dead instance leaves the live set at once, with its refusals.
 */
const TAKE_OVER = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
redis.call('ZREM', KEYS[3], ARGV[4])
redis.call('HDEL', KEYS[4], ARGV[4])
redis.call('HDEL', KEYS[5], ARGV[4])
local token = redis.call('INCR', KEYS[2])
local value = token .. ':' .. ARGV[2]
redis.call('SET', KEYS[1], value, 'PX', ARGV[3])
return value
`;

/** An instance that died leaves the live set (and its refusals) at once. */
const FORGET = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
`;

const RENEW = `
local renewed = {}
for i, key in ipairs(KEYS) do
  local current = redis.call('GET', key)
  if current == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[1])
    renewed[i] = 1
  elseif current then
    renewed[i] = {current, redis.call('PTTL', key)}
  else
    renewed[i] = 2
  end
end
return renewed
`;

/**
 * Who holds a lease this instance was refused (its acquisition or renewal found it held), read in
 * the same script: that instance, and how long its lease has left then, by Redis's clock.
 */
export interface HeldElsewhere {
  holder: string;
  leftMs: number;
}

/** A lease renewal's outcome: extended, held by another instance now (which), or held by nobody. */
export type Renewal = "renewed" | "gone" | HeldElsewhere;

/** A refusing script's reply, `[<token>:<instance>, PTTL]`: the holder; a lease without expiry counts `ttlMs`. */
function heldElsewhere([value, pttl]: [string, number], ttlMs: number): HeldElsewhere {
  return { holder: value.slice(value.indexOf(":") + 1), leftMs: pttl >= 0 ? pttl : ttlMs };
}

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #gone > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  redis.call('HDEL', KEYS[2], unpack(gone))
  redis.call('HDEL', KEYS[4], unpack(gone))
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[4], ARGV[1], ARGV[5]) end
local epoch = redis.call('GET', KEYS[3])
if not epoch then
  epoch = ARGV[4]
  redis.call('SET', KEYS[3], epoch)
end
local holders = {}
if #KEYS > 4 then holders = redis.call('MGET', unpack(KEYS, 5)) end
return {redis.call('ZRANGE', KEYS[1], 0, -1), holders, redis.call('HGETALL', KEYS[2]), epoch,
  redis.call('HGETALL', KEYS[4])}
`;

type LeaseScripts = {
  bothostLeaseAcquire(
    lease: string,
    counter: string,
    instance: string,
    ttl: number,
  ): Promise<string | [string, number]>;
  bothostLeaseRenew(
    numKeys: number,
    ...keysThenArgs: (string | number)[]
  ): Promise<(number | [string, number])[]>;
  bothostLeaseRelease(lease: string, value: string): Promise<number>;
  bothostHeartbeat(
    numKeys: number,
    ...keysThenArgs: (string | number)[]
  ): Promise<[string[], (string | null)[], string[], string, string[]]>;
  bothostLeaseTakeOver(
    lease: string,
    counter: string,
    instances: string,
    refusals: string,
    procs: string,
    seen: string,
    instance: string,
    ttl: number,
    dead: string,
  ): Promise<string | null>;
  bothostForget(instances: string, refusals: string, procs: string, dead: string): Promise<number>;
};

/**
 * The live instances' ids, each bot's lease holder (an instance id) or undefined when free, the
 * bots each live instance refuses (they failed to start there), and the leases' epoch.
 */
export interface ClusterView {
  instances: string[];
  holders: Map<string, string | undefined>;
  refusals: Map<string, Set<string>>;
  /**
   * A random id the first heartbeat on an empty Redis writes, kept for good: another one than a
   * round read before means Redis lost its keys meanwhile (flushed, or restarted without
   * persistence), the leases with them, where an expired lease leaves it as it was.
   */
  epoch: string;
  /** Each bot's lease as read (`<token>:<instance>`), for a take-over from a dead holder. */
  values: Map<string, string>;
  /** The process each live instance says it is (gone-holders.ts), by instance id. */
  procs: Map<string, string>;
}

interface RedisLeasesOptions {
  url: RedisTarget;
  /** The store's key prefix (records are `<prefix>#…`). */
  prefix: string;
  instanceId: string;
  /** The process this instance is (gone-holders.ts), said in each heartbeat; none where /proc is absent. */
  proc?: string | undefined;
  ttlMs: number;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export class RedisLeases {
  readonly #client: Redis & LeaseScripts;
  readonly #o: RedisLeasesOptions;
  /** The primary this connection reaches, and the replica confirmation of acquisitions and renewals. */
  readonly replication: Replication;

  private constructor(client: Redis, options: RedisLeasesOptions) {
    this.#client = client as Redis & LeaseScripts;
    this.#o = options;
    this.replication = new Replication(client, {
      waitForReplica: typeof options.url !== "string",
      // Well inside a renewal's command timeout (ttl/3): a renewal is late, not lost, when it waits.
      waitMs: Math.max(50, Math.floor(options.ttlMs / 6)),
      role: "leases",
      ...(options.log ? { log: options.log } : {}),
      sentinel: typeof options.url === "string" ? undefined : options.url,
    });
  }

  static async open(options: RedisLeasesOptions): Promise<RedisLeases> {
    const client = await connectRedis({
      target: options.url,
      role: "leases",
      offlineQueue: false,
      commandTimeoutMs: Math.max(100, Math.floor(options.ttlMs / 3)),
      ...(options.log ? { log: options.log } : {}),
    });
    client.defineCommand("bothostLeaseAcquire", { lua: ACQUIRE, numberOfKeys: 2 });
    client.defineCommand("bothostLeaseRenew", { lua: RENEW });
    client.defineCommand("bothostLeaseRelease", { lua: RELEASE, numberOfKeys: 1 });
    client.defineCommand("bothostHeartbeat", { lua: HEARTBEAT });
    client.defineCommand("bothostLeaseTakeOver", { lua: TAKE_OVER, numberOfKeys: 5 });
    client.defineCommand("bothostForget", { lua: FORGET, numberOfKeys: 3 });
    return new RedisLeases(client, options);
  }

  /**
   * Take the bot's lease with a new fencing token if it is free (or already this instance's);
   * `undefined` when another instance holds it, which `refused` is told.
   */
  async acquire(bot: string, refused?: (by: HeldElsewhere) => void): Promise<Fence | undefined> {
    const key = `${this.#o.prefix}#lease:${bot}`;
    const value = await this.#run("a lease acquisition", async () => {
      const taken = await this.#client.bothostLeaseAcquire(
        key,
        `${this.#o.prefix}#lease-token:${bot}`,
        this.#o.instanceId,
        this.#o.ttlMs,
      );
      if (typeof taken === "string") await this.replication.confirm("a lease acquisition");
      return taken;
    });
    if (typeof value === "string") return { key, value };
    refused?.(heldElsewhere(value, this.#o.ttlMs));
    return undefined;
  }

  /**
   * Take the bot's lease, with a new fencing token, from `dead`, an instance of this host whose
   * process is gone, if the lease still holds `seen`; `dead` leaves the live instances. `undefined`
   * when the lease changed since it was read.
   */
  async takeOver(bot: string, seen: string, dead: string): Promise<Fence | undefined> {
    const p = this.#o.prefix;
    const key = `${p}#lease:${bot}`;
    const value = await this.#run("a lease acquisition", async () => {
      const taken = await this.#client.bothostLeaseTakeOver(
        key,
        `${p}#lease-token:${bot}`,
        `${p}#instances`,
        `${p}#refusals`,
        `${p}#procs`,
        seen,
        this.#o.instanceId,
        this.#o.ttlMs,
        dead,
      );
      if (taken !== null) await this.replication.confirm("a lease acquisition");
      return taken;
    });
    return value === null ? undefined : { key, value };
  }

  /** `dead`, an instance of this host whose process is gone, leaves the live instances now. */
  async forget(dead: string): Promise<void> {
    const p = this.#o.prefix;
    await this.#run("a heartbeat", () =>
      this.#client.bothostForget(`${p}#instances`, `${p}#refusals`, `${p}#procs`, dead),
    );
  }

  /**
   * Extend each lease still holding its value by the ttl; for one that is not ours any more, whether
   * which other instance holds it now or that nobody does (`gone`: it expired, or Redis lost its keys).
   */
  async renew(fences: readonly Fence[]): Promise<Renewal[]> {
    const result = await this.#run("a lease renewal", async () => {
      const renewed = await this.#client.bothostLeaseRenew(
        fences.length,
        ...fences.map((f) => f.key),
        this.#o.ttlMs,
        ...fences.map((f) => f.value),
      );
      await this.replication.confirm("a lease renewal");
      return renewed;
    });
    return result.map((r) =>
      Array.isArray(r) ? heldElsewhere(r, this.#o.ttlMs) : r === 1 ? "renewed" : "gone",
    );
  }

  /** Give the lease up (only if it still holds `fence.value`), so another instance can take it now. */
  async release(fence: Fence): Promise<void> {
    await this.#run("a lease release", () => this.#client.bothostLeaseRelease(fence.key, fence.value));
  }

  /**
   * Say this instance is alive for one more ttl, and which bots it refuses (`refused`: they failed
   * to start here); resolves, read in the same step, the live instances, the holder of each of
   * `bots`' leases (undefined: free) and every live instance's refusals.
   */
  async heartbeat(bots: readonly string[], refused: Iterable<string> = []): Promise<ClusterView> {
    const p = this.#o.prefix;
    const keys = [
      `${p}#instances`,
      `${p}#refusals`,
      `${p}#epoch`,
      `${p}#procs`,
      ...bots.map((bot) => `${p}#lease:${bot}`),
    ];
    const mine = [...refused].join("\n");
    const proposed = randomBytes(8).toString("hex");
    const [instances, read, flat, epoch, procFlat] = await this.#run("a heartbeat", () =>
      this.#client.bothostHeartbeat(
        keys.length,
        ...keys,
        this.#o.instanceId,
        this.#o.ttlMs,
        mine,
        proposed,
        this.#o.proc ?? "",
      ),
    );
    const holders = new Map<string, string | undefined>();
    const values = new Map<string, string>();
    bots.forEach((bot, i) => {
      const value = read[i];
      holders.set(bot, value ? value.slice(value.indexOf(":") + 1) : undefined);
      if (value) values.set(bot, value);
    });
    const refusals = new Map<string, Set<string>>();
    for (let i = 0; i + 1 < flat.length; i += 2)
      if (instances.includes(flat[i]!)) refusals.set(flat[i]!, new Set(flat[i + 1]!.split("\n")));
    const procs = new Map<string, string>();
    for (let i = 0; i + 1 < procFlat.length; i += 2) procs.set(procFlat[i]!, procFlat[i + 1]!);
    return { instances, holders, refusals, epoch, values, procs };
  }

  /** Call `then` each time the connection is ready (again, after a loss). */
  onReady(then: () => void): void {
    this.#client.on("ready", then);
  }

  /** Leave the set of live instances and close the connection. */
  async close(): Promise<void> {
    await this.#client.zrem(`${this.#o.prefix}#instances`, this.#o.instanceId).catch(() => {});
    await this.#client.hdel(`${this.#o.prefix}#refusals`, this.#o.instanceId).catch(() => {});
    await this.#client.hdel(`${this.#o.prefix}#procs`, this.#o.instanceId).catch(() => {});
    await closeRedis(this.#client, "quit");
  }

  async #run<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      throw redisFailure(err, this.#o.url, what);
    }
  }
}
