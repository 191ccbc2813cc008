/**
 * The networked state store: the same contract as {@link FileStore}, kept in Redis so several
 * bothost instances can share it (config `state: { redis: redis://host:6379/0 }`).
 *
 * update → GET, then a Lua compare-and-set, retried while another writer got in between; list →
 * SCAN MATCH on the view's prefix, then MGET. `flush()` waits for the replies of every write
 * issued before it: a write is then as durable as the Redis server's persistence makes it (run
 * Redis with `appendonly yes` so a Redis restart keeps cursors and claims).
 */
import type { Redis } from "ioredis";
import { REDIS_PREFIX } from "./_keys.ts";
import { checkRedisVersion, connectRedis, describeRedisUrl } from "./_redis-connection.ts";
import { type FenceSource, type RedisCore, RedisView, storeScripts } from "./_redis-view.ts";
import { StateError } from "./state-error.ts";
import type { StateBackend, StateStore } from "./state-store.ts";

export type { Fence, FenceSource } from "./_redis-view.ts";

export interface RedisStoreOptions {
  /** `redis://[:password@]host[:port][/db]`, or `rediss://` for TLS. */
  url: string;
  /** Every key starts with `<prefix>:` (and cluster records with `<prefix>#`). @default "bothost" */
  prefix?: string;
  /** Fail a command without a reply after this long, waiting for a reconnect included. @default 10000 */
  commandTimeoutMs?: number;
  /** Where connection trouble is reported (a pino logger fits). */
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

/** A {@link StateBackend} in Redis. */
export class RedisStore extends RedisView implements StateBackend {
  readonly #pending: Set<Promise<unknown>>;
  readonly url: string;
  readonly prefix: string;

  private constructor(client: Redis, url: string, prefix: string, pending: Set<Promise<unknown>>) {
    const core: RedisCore = {
      client,
      url,
      keyPrefix: `${prefix}:`,
      lifecycle: { closed: false, description: `redis ${describeRedisUrl(url)} prefix ${prefix}` },
      track: (write) => {
        pending.add(write);
        const forget = () => pending.delete(write);
        write.then(forget, forget);
        return write;
      },
    };
    super(core, "", undefined);
    this.#pending = pending;
    this.url = url;
    this.prefix = prefix;
  }

  /** Connect (rejects with `STATE_UNAVAILABLE` when Redis cannot be reached) and load the scripts. */
  static async open(options: RedisStoreOptions): Promise<RedisStore> {
    const prefix = options.prefix ?? "bothost";
    if (!REDIS_PREFIX.test(prefix)) {
      throw new StateError(
        "STATE_INVALID_KEY",
        `The Redis key prefix "${prefix}" must be 1 to 64 letters, digits, "_", "." or "-".`,
      );
    }
    const client = await connectRedis({
      url: options.url,
      role: "state",
      offlineQueue: true,
      commandTimeoutMs: options.commandTimeoutMs ?? 10_000,
      ...(options.log ? { log: options.log } : {}),
    });
    try {
      await checkRedisVersion(client, options.url);
    } catch (err) {
      client.disconnect();
      throw err;
    }
    for (const [name, lua] of Object.entries(storeScripts))
      client.defineCommand(name, { lua, numberOfKeys: 2 });
    return new RedisStore(client, options.url, prefix, new Set());
  }

  /**
   * A root view whose writes (set, setIfAbsent, update, delete, in it and every namespace under it)
   * happen only while `fence.current()` is still the value of its lease key in Redis, checked
   * atomically with the write. Reads are not fenced.
   */
  fenced(fence: FenceSource): StateStore {
    return new RedisView(this.core, "", fence);
  }

  /** The Redis key of a record of the cluster (leases, instances): `<prefix>#<name>`, never a state key. */
  clusterKey(name: string): string {
    return `${this.prefix}#${name}`;
  }

  /** The connection, for tests and tools (the lease keeper opens its own). */
  get client(): Redis {
    return this.core.client;
  }

  async flush(): Promise<void> {
    this.checkOpen();
    await Promise.allSettled([...this.#pending]);
  }

  /** The same as {@link RedisStore.flush}. */
  async commit(): Promise<void> {
    return this.flush();
  }

  async close(): Promise<void> {
    if (this.core.lifecycle.closed) return;
    this.core.lifecycle.closed = true;
    await Promise.allSettled([...this.#pending]);
    await this.core.client.quit().catch(() => this.core.client.disconnect());
  }
}
