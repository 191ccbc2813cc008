/**
 * The {@link StateStore} operations over Redis. Stored keys are the same escaped paths as the
 * embedded store's (`bot/runtime/cursor`), under `<prefix>:`; values are JSON text; expiry is
 * Redis's own (`PX`).
 *
 * Every write is one Lua script, run atomically on the server, so a write and its fence check can
 * never be separated: a write carrying a fence (`ARGV[1]`, the lease value the writer believes it
 * holds; `KEYS[2]`, the lease key) happens only if the lease key still holds exactly that value.
 * An empty `ARGV[1]` means "no fence" (single instance), and `KEYS[2]` is then the key itself.
 */
import type { Redis } from "ioredis";
import {
  byKey,
  checkKey,
  checkTtl,
  childPrefix,
  closedError,
  escapeSegment,
  fromJsonText,
  toJsonText,
  unescapeSegment,
} from "./_keys.ts";
import { redisFailure } from "./_redis-connection.ts";
import { StateError } from "./state-error.ts";
import type { JsonValue, SetOptions, StateEntry, StateStore, UpdateOptions } from "./state-store.ts";

/** The lease a bot's writes must still hold: its Redis key and the exact value written there. */
export interface Fence {
  key: string;
  value: string;
}

/**
 * Where a fenced view reads its fence at each write: `undefined` means this instance does not hold
 * the lease now, and the write is refused without asking Redis.
 */
export interface FenceSource {
  current(): Fence | undefined;
  /** Names the holder in error messages, e.g. `bot "echo"`. */
  readonly description: string;
}

const FENCE = `
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('BOTHOST_FENCED the lease is held by another instance or has expired')
end
`;

/** ARGV[2] value, ARGV[3] ttl in ms or ''. Returns 1. */
const set = `${FENCE}
if ARGV[3] == '' then
  redis.call('SET', KEYS[1], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return 1
`;

/** ARGV[2] value, ARGV[3] ttl in ms or ''. Returns 1 if created, 0 if the key existed. */
const setIfAbsent = `${FENCE}
local created
if ARGV[3] == '' then
  created = redis.call('SET', KEYS[1], ARGV[2], 'NX')
else
  created = redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[3])
end
if created then return 1 else return 0 end
`;

/**
 * Compare-and-set for `update`: ARGV[2] '1' if a value is expected ('0': the key must be absent),
 * ARGV[3] the expected text, ARGV[4] 'set' or 'del', ARGV[5] the new text, ARGV[6] a ttl in ms or
 * '' to keep the current expiry. Returns 1 when written, 0 when the value had changed meanwhile.
 */
const compareAndSet = `${FENCE}
local current = redis.call('GET', KEYS[1])
if ARGV[2] == '1' then
  if current ~= ARGV[3] then return 0 end
elseif current then
  return 0
end
if ARGV[4] == 'del' then
  redis.call('DEL', KEYS[1])
elseif ARGV[6] ~= '' then
  redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[6])
elseif current then
  redis.call('SET', KEYS[1], ARGV[5], 'KEEPTTL')
else
  redis.call('SET', KEYS[1], ARGV[5])
end
return 1
`;

/** Returns how many keys were deleted (0 or 1). */
const remove = `${FENCE}
return redis.call('DEL', KEYS[1])
`;

/** Every script takes two keys (the key, then the fence key) and the fence value first. */
export const storeScripts = {
  bothostSet: set,
  bothostSetIfAbsent: setIfAbsent,
  bothostCompareAndSet: compareAndSet,
  bothostDelete: remove,
} as const;

type StoreScript = keyof typeof storeScripts;
/** The error text a refused fenced write comes back with. */
const FENCED_REPLY = "BOTHOST_FENCED";

type ScriptFn = (key: string, fenceKey: string, fence: string, ...args: string[]) => Promise<number>;

/** What every view of one store shares. */
export interface RedisCore {
  client: Redis;
  url: string;
  /** `<prefix>:` */
  keyPrefix: string;
  lifecycle: { closed: boolean; description: string };
  /** Remember an in-flight write until it settles (flush waits for them). */
  track<T>(write: Promise<T>): Promise<T>;
}

const MAX_UPDATE_ATTEMPTS = 100;

export class RedisView implements StateStore {
  constructor(
    protected readonly core: RedisCore,
    private readonly path: string,
    private readonly fence: FenceSource | undefined,
  ) {}

  async get(key: string): Promise<JsonValue | undefined> {
    const stored = this.stored(key);
    const text = await this.call("read", () => this.core.client.get(stored));
    return text === null ? undefined : fromJsonText(text);
  }

  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    const stored = this.stored(key);
    await this.write("bothostSet", stored, toJsonText(key, value), ttlArg(options));
  }

  async setIfAbsent(key: string, value: JsonValue, options?: SetOptions): Promise<boolean> {
    const stored = this.stored(key);
    return (await this.write("bothostSetIfAbsent", stored, toJsonText(key, value), ttlArg(options))) === 1;
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
    const stored = this.stored(key);
    return (await this.write("bothostDelete", stored)) === 1;
  }

  async list(prefix = ""): Promise<StateEntry[]> {
    this.checkOpen();
    const start = this.core.keyPrefix + this.path + escapeSegment(checkKey(prefix, "prefix"));
    const skip = this.core.keyPrefix.length + this.path.length;
    const keys = await this.call("list", async () => {
      const found = new Set<string>();
      let cursor = "0";
      do {
        const [next, batch] = await this.core.client.scan(
          cursor,
          "MATCH",
          `${globEscape(start)}*`,
          "COUNT",
          1000,
        );
        cursor = next;
        for (const k of batch) if (!k.slice(skip).includes("/")) found.add(k);
      } while (cursor !== "0");
      return [...found];
    });
    const result: StateEntry[] = [];
    for (let i = 0; i < keys.length; i += 500) {
      const chunk = keys.slice(i, i + 500);
      const texts = await this.call("list", () => this.core.client.mget(...chunk));
      chunk.forEach((k, j) => {
        const text = texts[j];
        // Expired (or deleted) between the scan and the read.
        if (text !== null && text !== undefined) {
          result.push({ key: unescapeSegment(k.slice(skip)), value: fromJsonText(text) });
        }
      });
    }
    return result.sort(byKey);
  }

  namespace(name: string): StateStore {
    return new RedisView(this.core, childPrefix(this.path, name), this.fence);
  }

  protected checkOpen(): void {
    if (this.core.lifecycle.closed) throw closedError(this.core.lifecycle.description);
  }

  private stored(key: string): string {
    this.checkOpen();
    return this.core.keyPrefix + this.path + escapeSegment(checkKey(key));
  }

  private async write(script: StoreScript, stored: string, ...args: string[]): Promise<number> {
    let fenceKey = stored;
    let fenceValue = "";
    if (this.fence) {
      const fence = this.fence.current();
      if (!fence) throw this.fencedError();
      fenceKey = fence.key;
      fenceValue = fence.value;
    }
    const run = (this.core.client as unknown as Record<StoreScript, ScriptFn>)[script].bind(this.core.client);
    return this.core.track(this.call("write", () => run(stored, fenceKey, fenceValue, ...args)));
  }

  private async call<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (err instanceof Error && err.message.startsWith(FENCED_REPLY)) throw this.fencedError();
      throw redisFailure(err, this.core.url, `a ${what}`);
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

/** SCAN MATCH treats `* ? [ ] \` as pattern characters. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
