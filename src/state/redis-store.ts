/**
 * The networked state store: the same contract as {@link FileStore}, kept in Redis so several
 * bothost instances can share it (config `state: { redis: redis://host:6379/0 }`). Stored keys are
 * the embedded store's escaped paths under `<prefix>:`; values are JSON text; expiry is Redis's
 * own. update → GET, then a Lua compare-and-set, retried while another writer got in between;
 * list → SCAN MATCH on the view's prefix, then MGET. `flush()` waits for the replies of every
 * write issued before it: a write is then as durable as the Redis server's persistence makes it
 * (run Redis with `appendonly yes` so a Redis restart keeps cursors and claims).
 * Every write is one Lua script, run atomically on the server, so a write and its fence check can
 * never be separated: a write carrying a fence (`ARGV[1]`, the lease value the writer believes it
 * holds; `KEYS[2]`, the lease key) happens only if the lease key still holds exactly that value.
 * An empty `ARGV[1]` means "no fence" (single instance), and `KEYS[2]` is then the key itself
 * (connection options: redis-connection.ts; the scripts: _redis-scripts.ts).
 */
import type { Redis } from "ioredis";
import { byKey, checkTtl, fromJsonText, KeyedView, REDIS_PREFIX, toJsonText } from "./_keys.ts";
import { applyBatch, applyBatchScript } from "./_redis-batch.ts";
import type { LostDataLog } from "./_redis-index.ts";
import { forget, indexedKeys, keysUnder, openIndex, pruneExpired } from "./_redis-index.ts";
import { defineStoreScripts, FENCED_REPLY, type StoreScript, storeScript } from "./_redis-scripts.ts";
import { warnUnsafeConfig } from "./redis-config-check.ts";
import { checkRedisVersion, closeRedis, connectRedis, type Fence, redisFailure } from "./redis-connection.ts";
import { Replication } from "./redis-replication.ts";
import { describeRedis, type RedisStatus, type RedisTarget } from "./redis-url.ts";
import { StateError } from "./state-error.ts";
import type {
  JsonValue,
  OnceMarker,
  SetOptions,
  StateBackend,
  StateEntry,
  StateStore,
  StoreWrite,
  UpdateOptions,
} from "./state-store.ts";

/**
 * Where a fenced view reads its fence at each write: `undefined` means this instance does not hold
 * the lease now, and the write is refused without asking Redis.
 */
export interface FenceSource {
  current(): Fence | undefined;
  /** Names the holder in error messages, e.g. `bot "echo"`. */
  readonly description: string;
}

/** What every view of one store shares. */
interface RedisCore {
  client: Redis;
  /** The store's key prefix (`bothost`): its keys are `<prefix>:…`, its index `<prefix>#ns:…`. */
  prefix: string;
  url: RedisTarget;
  /** The primary reached, and the replica confirmation every write waits for (through Sentinel). */
  replication: Replication;
  lifecycle: { closed: boolean; description: string };
  /** In-flight writes, until they settle (flush waits for them). */
  pending: Set<Promise<unknown>>;
}

const MAX_UPDATE_ATTEMPTS = 100;

class RedisView extends KeyedView implements StateStore {
  /** `path`: `<store prefix>:`, then the namespaces'. */
  constructor(
    protected readonly core: RedisCore,
    path: string,
    private readonly fence: FenceSource | undefined,
  ) {
    super(path, core.lifecycle);
  }

  async get(key: string): Promise<JsonValue | undefined> {
    const stored = this.stored(key);
    const text = await this.call("read", () => this.core.client.get(stored));
    return text === null ? undefined : fromJsonText(text);
  }

  async getMany(keys: readonly string[]): Promise<(JsonValue | undefined)[]> {
    const stored = keys.map((key) => this.stored(key));
    const texts = stored.length === 0 ? [] : await this.call("read", () => this.core.client.mget(...stored));
    return texts.map((text) => (text === null ? undefined : fromJsonText(text)));
  }

  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    await this.write("bothostSet", this.stored(key), toJsonText(key, value), ttlArg(options), "");
  }

  async setIfAbsent(key: string, value: JsonValue, options?: SetOptions): Promise<boolean> {
    const stored = this.stored(key);
    return (await this.write("bothostSet", stored, toJsonText(key, value), ttlArg(options), "NX")) === 1;
  }

  async update(
    key: string,
    fn: (current: JsonValue | undefined) => JsonValue | undefined,
    options?: UpdateOptions,
  ): Promise<JsonValue | undefined> {
    const stored = this.stored(key);
    const ttl = ttlArg(options);
    for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
      const currentText = await this.call("read", () => this.core.client.get(stored));
      const next = fn(currentText === null ? undefined : fromJsonText(currentText));
      const nextText = next === undefined ? "" : toJsonText(key, next);
      const written = await this.write(
        "bothostCompareAndSet",
        stored,
        currentText === null ? "0" : "1",
        currentText ?? "",
        next === undefined ? "del" : "set",
        nextText,
        ttl,
      );
      if (written === 1) return next;
    }
    throw new StateError(
      "STATE_UNAVAILABLE",
      `update("${key}") lost ${MAX_UPDATE_ATTEMPTS} compare-and-set races in a row; the key is being written too often by others. Retry later.`,
    );
  }

  async delete(key: string): Promise<boolean> {
    return (await this.write("bothostDelete", this.stored(key))) === 1;
  }

  async list(prefix = ""): Promise<StateEntry[]> {
    const start = this.stored(prefix, "prefix").slice(this.path.length);
    const { client, prefix: storePrefix } = this.core;
    const found = await this.call("list", async () => {
      await pruneExpired(client, storePrefix);
      return indexedKeys(client, storePrefix, this.path, start);
    });
    const result: StateEntry[] = [];
    for (let i = 0; i < found.length; i += 500) {
      const chunk = found.slice(i, i + 500);
      const texts = await this.call("list", () => client.mget(...chunk));
      const gone: string[] = [];
      chunk.forEach((stored, j) => {
        const text = texts[j];
        // Expired (or deleted) since the prune.
        if (text === null || text === undefined) gone.push(stored.slice(this.path.length));
        else result.push({ key: this.ownKey(stored)!, value: fromJsonText(text) });
      });
      await this.call("list", () => forget(client, storePrefix, this.path, gone));
    }
    return result.sort(byKey);
  }

  async applyWrites(writes: readonly StoreWrite[], once?: OnceMarker): Promise<boolean> {
    if (writes.length === 0 && once === undefined) return true;
    if (once && !(once.store instanceof RedisView && once.store.core === this.core))
      throw new StateError(
        "STATE_INVALID_KEY",
        "A batch's marker must be kept in the same store as its writes.",
      );
    const fence = this.fence?.current();
    if (this.fence && !fence) throw this.fencedError();
    const client = this.core.client as unknown as Record<
      string,
      (...a: (string | number)[]) => Promise<number>
    >;
    return applyBatch(
      {
        client: this.core.client,
        stored: (key) => this.stored(key),
        marker: once && { stored: (once.store as RedisView).stored(once.key), ttlMs: once.ttlMs },
        fence,
        call: (what, op) => this.call(what, op),
        write: (keys, args) =>
          this.track(this.call("write", () => client.bothostApply!(keys.length, ...keys, ...args))),
      },
      writes,
    );
  }

  async clear(): Promise<number> {
    this.checkOpen();
    const keys = await this.call("list", () => keysUnder(this.core.client, this.path));
    // One fenced DEL per key (a view whose lease is lost deletes nothing more), sent 500 at a time.
    let deleted = 0;
    for (let i = 0; i < keys.length; i += 500) {
      const results = await Promise.all(keys.slice(i, i + 500).map((k) => this.write("bothostDelete", k)));
      deleted += results.reduce((n, r) => n + r, 0);
    }
    return deleted;
  }

  namespace(name: string): StateStore {
    return new RedisView(this.core, this.childPrefix(name), this.fence);
  }

  checkFence(): void {
    if (this.fence && !this.fence.current()) throw this.fencedError();
  }

  private async write(script: StoreScript, stored: string, ...args: string[]): Promise<number> {
    // Unfenced: the key stands in for the fence key, and the empty value means no fence.
    const fence = this.fence ? this.fence.current() : { key: stored, value: "" };
    if (!fence) throw this.fencedError();
    const run = storeScript(this.core.client, script);
    return this.track(this.call("write", () => run(stored, fence.key, fence.value, ...args)));
  }

  /** Every write's way out: confirmed on a replica if asked (redis-replication.ts), tracked for flush(). */
  private track<T>(write: Promise<T>): Promise<T> {
    const durable = write.then(async (result) => {
      await this.call("write", () => this.core.replication.confirm("a write"));
      return result;
    });
    this.core.pending.add(durable);
    const forget = () => this.core.pending.delete(durable);
    durable.then(forget, forget);
    return durable;
  }

  private async call<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (err instanceof Error && err.message.startsWith(FENCED_REPLY)) throw this.fencedError();
      throw redisFailure(err, this.core.url, `a ${what}`, what === "write");
    }
  }

  private fencedError(): StateError {
    return new StateError(
      "STATE_FENCED",
      `Write refused: this instance no longer holds the lease of ${this.fence?.description ?? "this bot"} (another instance runs it now, or the lease expired while Redis was out of reach). Nothing was changed; the bot is being stopped here.`,
    );
  }
}

function ttlArg(options: SetOptions | undefined): string {
  const ttlMs = checkTtl(options);
  return ttlMs === undefined ? "" : String(Math.max(1, Math.ceil(ttlMs)));
}

export interface RedisStoreOptions {
  /** `redis://[:password@]host[:port][/db]`, or `rediss://` for TLS, or Sentinel. */
  url: RedisTarget;
  /** Every key starts with `<prefix>:` (and cluster records with `<prefix>#`). @default "bothost" */
  prefix?: string;
  /** Fail a command without a reply after this long, waiting for a reconnect included. @default 10000 */
  commandTimeoutMs?: number;
  /** Confirm each write on every replica (`WAIT n <ms>`) before it counts. @default 1000 via Sentinel, else 0 */
  replicaWaitMs?: number;
  /** Where connection trouble, and keys lost by Redis, are reported (a pino logger fits). */
  log?: LostDataLog;
}

/** A {@link StateBackend} in Redis. */
export class RedisStore extends RedisView implements StateBackend {
  private constructor(
    client: Redis,
    readonly url: RedisTarget,
    readonly prefix: string,
    readonly replication: Replication,
  ) {
    const lifecycle = { closed: false, description: `redis ${describeRedis(url)} prefix ${prefix}` };
    super({ client, url, prefix, replication, lifecycle, pending: new Set() }, `${prefix}:`, undefined);
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
      target: options.url,
      role: "state",
      offlineQueue: true,
      commandTimeoutMs: options.commandTimeoutMs ?? 10_000,
      ...(options.log ? { log: options.log } : {}),
    });
    defineStoreScripts(client);
    client.defineCommand("bothostApply", { lua: applyBatchScript });
    try {
      await checkRedisVersion(client, options.url);
      await openIndex(client, prefix, describeRedis(options.url), options.log);
      await warnUnsafeConfig(client, options.url, options.log);
    } catch (err) {
      void closeRedis(client, "now");
      throw err instanceof StateError ? err : redisFailure(err, options.url, "indexing the existing keys");
    }
    const waitMs = options.replicaWaitMs ?? (typeof options.url === "string" ? 0 : 1_000);
    const replication = new Replication(client, {
      waitForReplica: waitMs > 0,
      waitMs,
      role: "state",
      log: options.log,
      sentinel: typeof options.url === "string" ? undefined : options.url,
      watchSentinels: true,
    });
    return new RedisStore(client, options.url, prefix, replication);
  }

  /**
   * A root view whose writes (set, setIfAbsent, update, delete, in it and every namespace under it)
   * happen only while `fence.current()` is still the value of its lease key in Redis, checked
   * atomically with the write. Reads are not fenced.
   */
  fenced(fence: FenceSource): StateStore {
    return new RedisView(this.core, this.path, fence);
  }

  async flush(): Promise<void> {
    this.checkOpen();
    await Promise.allSettled([...this.core.pending]);
  }

  redisStatus(): RedisStatus {
    return this.replication.status(this.url);
  }

  /** The same as {@link RedisStore.flush}. */
  async commit(): Promise<void> {
    return this.flush();
  }

  async close(): Promise<void> {
    if (this.core.lifecycle.closed) return;
    this.core.lifecycle.closed = true;
    await Promise.allSettled([...this.core.pending]);
    await closeRedis(this.core.client, "quit");
  }
}
