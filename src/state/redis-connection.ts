/**
 * The Redis connection the store and the lease keeper each open, and the error a failed command
 * becomes. Connection options: `autoResendUnfulfilledCommands: false` because a command that was
 * sent but not answered when the connection dropped may or may not have run, and resending a claim
 * or a compare-and-set would turn "maybe" into "twice"; with the offline queue (the store),
 * commands not yet sent wait and go out after the reconnect (a Redis restart of a second or two
 * loses nothing); `commandTimeout` bounds every command, so a hung server or a partition surfaces
 * as an error; a command in flight when the connection closes fails at once (failUnanswered).
 */
import { Redis, type RedisOptions } from "ioredis";
import { describeRedis, hostPort, type RedisTarget } from "./redis-url.ts";
import { StateError } from "./state-error.ts";

/** The lease a bot's writes must still hold: its Redis key and the exact value written there. */
export interface Fence {
  key: string;
  value: string;
}

/** A fence's fencing token: the number its value begins with (`<token>:<instance>`), larger for each new lease. */
export function fencingTokenOf(fence: Fence): number {
  return Number(fence.value.slice(0, fence.value.indexOf(":")));
}

interface ConnectionOptions {
  /** `redis://[:password@]host[:port][/db]` or `rediss://…` (TLS), or Sentinel. */
  target: RedisTarget;
  /** Fail a command that has no reply after this long (queued time included). */
  commandTimeoutMs: number;
  /** Queue commands while reconnecting (the store) or fail them at once (the lease keeper). */
  offlineQueue: boolean;
  /** Connection losses and recoveries, one line each per outage. */
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
  /** Shown in log lines, e.g. "state" or "leases". */
  role: string;
}

/** A connected client; rejects with `STATE_UNAVAILABLE` when the first connection fails. */
export async function connectRedis(options: ConnectionOptions): Promise<Redis> {
  const target = options.target;
  const where = describeRedis(target);
  const redisOptions: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: options.offlineQueue,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: null,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: 5_000,
    // Reconnect quickly and keep trying: the lease keeper decides when an outage is too long.
    retryStrategy: (attempt) => Math.min(50 * attempt, 1_000),
  };
  // One line when an outage starts and one when it ends, however many reconnect attempts between.
  let lost = false;
  let connected = false; // the first connection's failure is the error open() throws, not a log line
  const client =
    typeof target === "string"
      ? new Redis(target, redisOptions)
      : new Redis(sentinelOptions(target, redisOptions, () => connected));
  const outage = (err?: string) => {
    if (lost || !connected) return;
    lost = true;
    const fields = { redis: where, role: options.role, ...(err ? { err } : {}) };
    options.log?.warn(fields, "redis connection lost; reconnecting");
  };
  // A refused AUTH closes the first connection: connect() then says only "Connection is closed".
  let refused: string | undefined;
  // Why the first connection failed (a refused or timed-out connect): connect() says only that it closed.
  let firstError: Error | undefined;
  client.on("error", (err: Error) => {
    if (!connected) {
      refused ??= authRefusal(err.message, passwordField(target));
      firstError ??= err;
    }
    outage(err.message);
  });
  client.on("close", () => failUnanswered(client));
  // ioredis gives a connection up for good ("end") when, through Sentinel, a `+switch-master`
  // arrives while it is asking the Sentinels for the primary after losing the old one (its
  // failover detector closes the connector mid-connect): both of a daemon's connections then
  // stayed closed while the Sentinels named a live primary. Only its owner ends one (closeRedis).
  client.on("end", () => {
    if (!connected || owned.has(client)) return;
    outage("the client stopped reconnecting");
    void Promise.resolve().then(() => {
      if (client.status === "end" && !owned.has(client)) client.connect().catch(() => {});
    });
  });
  client.on("reconnecting", () => outage());
  client.on("ready", () => {
    connected = true;
    if (!lost) return;
    lost = false;
    options.log?.info({ redis: where, role: options.role }, "redis connection restored");
  });
  try {
    await client.connect();
    await client.ping();
    // ioredis only logs a SELECT refused at connect, then works in database 0: asked again here,
    // a database the server does not have fails the start instead of sharing another's keys.
    await client.select(client.options.db ?? 0);
  } catch (thrown) {
    void closeRedis(client, "now");
    if (/^ERR DB index is out of range/.test((thrown as Error).message)) {
      const message = `Redis at ${where} has no database ${client.options.db} (state.redis): name one it has (0 to 15 unless its databases setting says more).`;
      throw new StateError("STATE_UNAVAILABLE", message, { cause: thrown });
    }
    const err = firstError ?? thrown;
    refused ??= authRefusal((err as Error).message, passwordField(target));
    const silent = sentinelsSilent((thrown as Error).message);
    // The Sentinels refusing the authentication: the last error of ioredis's "All sentinels are
    // unreachable … Last error: …", which otherwise reads as if none had answered.
    const lastAsked = silent ? / Last error: (.*)$/.exec((thrown as Error).message)?.[1] : undefined;
    const sentinelRefused = lastAsked && authRefusal(lastAsked, "state.redis.sentinel_password");
    if (refused || sentinelRefused) {
      const message = refused
        ? `Redis at ${where} refused the authentication (state.redis): ${refused}.`
        : `Redis at ${where}: the Sentinels refused the authentication (state.redis): ${sentinelRefused}.`;
      throw new StateError("STATE_UNAVAILABLE", message, { cause: err });
    }
    throw new StateError(
      "STATE_UNAVAILABLE",
      `Cannot connect to Redis at ${where} (state.redis): ${silent ?? (err as Error).message.replace(/\.$/, "")}. ${typeof target === "string" ? "Check that Redis runs there and that the URL, password and database are right." : "Check that the Sentinels run there, that they monitor that name, and that the passwords and database are right."}`,
      { cause: err },
    );
  }
  return client;
}

/** Where the password the primary is given is set. */
function passwordField(target: RedisTarget): string {
  return typeof target === "string"
    ? "the password in the URL (redis://:password@host:port/db)"
    : "state.redis.password";
}

/**
 * A Redis error refusing the authentication, in words naming what to fix (`field`; never the
 * password: the server's own text is not repeated), or undefined for any other error.
 */
export function authRefusal(message: string, field: string): string | undefined {
  if (/^WRONGPASS\b|^ERR invalid (username-)?password/.test(message))
    return `the password (or user name) given is wrong (WRONGPASS): check ${field}`;
  if (/^NOAUTH\b/.test(message)) return `it requires a password and none was given (NOAUTH): set ${field}`;
  return undefined;
}

/** Clients their owner closed: the only ones left ended. */
const owned = new WeakSet<Redis>();

/** Close a client of {@link connectRedis} for good: `quit` after its replies, or `now`. */
export async function closeRedis(client: Redis, how: "quit" | "now"): Promise<void> {
  owned.add(client);
  if (how === "now") client.disconnect();
  else await client.quit().catch(() => client.disconnect());
}

/** Rounds of asking every Sentinel, about 6 s, before a first connection gives up on them. */
const FIRST_SENTINEL_ROUNDS = 10;

/**
 * ioredis's "All sentinels are unreachable and retry is disabled. Last error: …" (a first
 * connection giving up), said for an operator; undefined for any other error.
 */
function sentinelsSilent(message: string): string | undefined {
  if (!message.startsWith("All sentinels are unreachable")) return undefined;
  // A Sentinel that answered without naming a primary says so; a closed connection says nothing more.
  const last = / Last error: (.*)$/.exec(message)?.[1]?.replace(/\.$/, "");
  const told = last && !/^Connection is closed$/i.test(last) ? ` (the last: ${last})` : "";
  return `no Sentinel named the primary (none answered, or none monitors that name) in ${FIRST_SENTINEL_ROUNDS} rounds of asking each, over about 6 s${told}`;
}

/**
 * Through Sentinel: ask the Sentinels for the primary at each (re)connect, and with
 * `failoverDetector` listen for `+switch-master` so a connection to a primary that was demoted
 * (or frozen, then replaced) is dropped at once instead of writing where the writes will be lost.
 * Until the first connection (`connected` false) the Sentinels are asked {@link
 * FIRST_SENTINEL_ROUNDS} times, then the start fails; once connected, a reconnect asks them until
 * they answer.
 */
function sentinelOptions(
  target: Exclude<RedisTarget, string>,
  base: RedisOptions,
  connected: () => boolean,
): RedisOptions {
  return {
    ...base,
    sentinels: target.sentinels.map(hostPort),
    name: target.name,
    db: target.db ?? 0,
    failoverDetector: true,
    role: "master",
    sentinelRetryStrategy: (attempt) =>
      !connected() && attempt >= FIRST_SENTINEL_ROUNDS ? null : Math.min(100 * attempt, 1_000),
    sentinelCommandTimeout: 1_000,
    ...(target.password !== undefined ? { password: target.password } : {}),
    ...(target.sentinelPassword !== undefined ? { sentinelPassword: target.sentinelPassword } : {}),
    ...(target.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
  };
}

/** ioredis's own record of the commands sent on a connection that closed before they were answered. */
interface Unanswered {
  prevCommandQueue?: { length: number; shift(): { command: { reject(err: Error): void } } } | null;
}

/**
 * Fail at once every command that was sent and not answered when the connection closed. With
 * `autoResendUnfulfilledCommands: false`, ioredis keeps them until the next connection is ready
 * and then drops them without settling: each waited out its whole `commandTimeout` (10 s for the
 * store), so a Redis restart of one second held a handler's write, and its conversation, that long.
 * Its `close` event comes a tick after it recorded them.
 */
function failUnanswered(client: Redis): void {
  const internal = client as unknown as Unanswered;
  const queue = internal.prevCommandQueue;
  if (!queue) return;
  internal.prevCommandQueue = null;
  while (queue.length > 0) {
    queue
      .shift()
      .command.reject(
        new Error("the connection closed before Redis answered; the command may or may not have run"),
      );
  }
}

/**
 * The error a failed command becomes. `changes`: the command writes (the default), so that it may
 * have been applied although it failed; a read's error says nothing of that.
 */
export function redisFailure(err: unknown, target: RedisTarget, what: string, changes = true): StateError {
  if (err instanceof StateError) return err;
  let message = err instanceof Error ? err.message : String(err);
  // ioredis refusing a command while a connection without an offline queue reconnects: never sent.
  const unsent = message.startsWith("Stream isn't writeable and enableOfflineQueue options is false");
  if (unsent) message = "the connection to Redis is down and being made again; the command was not sent";
  const maybe = changes && !unsent ? "; a write that failed this way may or may not have been applied" : "";
  return new StateError(
    "STATE_UNAVAILABLE",
    `Redis at ${describeRedis(target)} did not complete ${what}: ${message.replace(/\.$/, "")}. Check that Redis runs and is reachable${maybe}.`,
    { cause: err },
  );
}

/** Redis 6.0 added `SET … KEEPTTL`, which `update` needs. */
export async function checkRedisVersion(client: Redis, url: RedisTarget): Promise<void> {
  const info = await client.info("server");
  const version = /redis_version:(\d+)\.(\d+)/.exec(info);
  if (version && Number(version[1]) < 6) {
    throw new StateError(
      "STATE_UNAVAILABLE",
      `Redis at ${describeRedis(url)} is version ${version[1]}.${version[2]}; bothost needs Redis 6.0 or newer.`,
    );
  }
}
