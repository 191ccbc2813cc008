/**
 * Cluster fixtures: a redis-server of the test's own (so a test can stop and restart it), a TCP
 * proxy that can freeze a connection (a network partition), and configs that run the cluster
 * bot on `state.redis` with short leases.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server, Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterEach, beforeAll, expect } from "vitest";
import type { OrgInput, Sandbox } from "../../src/sandbox/types.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { assertBuilt, type CliProcess, killAll, repoRoot, spawnCli } from "./cli.ts";
import { botEmail, MEMBER, OWNER, send, startE2eSandbox } from "./e2e-daemon.ts";
import { freePort } from "./free-port.ts";
import { dropPrefix, redisUrl, uniquePrefix } from "./redis.ts";

export { freePort };

export const CLUSTER_BOT = path.join(repoRoot, "test/fixtures/cluster/cluster-bot.mjs");
export const HOOK_TOKEN = "cluster-hook-token";

/** True when `redis-server` is on PATH (`.ci/run` installs it). */
export function hasRedisServer(): boolean {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface OwnRedis {
  url: string;
  /**
   * SHUTDOWN (its append-only file is written first), then start it again on the same port,
   * `downMs` after it exited (default at once).
   */
  restart(downMs?: number): Promise<void>;
  /** SHUTDOWN, until {@link up}: an outage as long as the test makes it. */
  down(): Promise<void>;
  /** Start it again on the same port, with what it had (after {@link down}). */
  up(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A redis-server on a free port, persisting to an append-only file in a temp directory;
 * `requirepass`: it refuses clients without that password.
 */
export async function startOwnRedis(options: { requirepass?: string } = {}): Promise<OwnRedis> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-redis-"));
  let child: ChildProcess | undefined;
  const launch = async () => {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes"];
    args.push("--appendfsync", "always", "--dir", dir, "--daemonize", "no");
    if (options.requirepass !== undefined) args.push("--requirepass", options.requirepass);
    child = spawn("redis-server", args, { cwd: dir, stdio: "ignore" });
    await expect.poll(() => ping(port), { timeout: 10_000, interval: 50 }).toBe(true);
  };
  /** Whether the server started last still runs (it exited neither with a code nor by a signal). */
  const alive = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const halt = async () => {
    const proc = child;
    if (!proc || !alive()) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill("SIGTERM"); // redis-server shuts down cleanly on SIGTERM, syncing the append-only file
    await exited;
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    restart: async (downMs = 0) => {
      await halt();
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await launch();
    },
    down: halt,
    // Already up (a case's cleanup may ask again): a second server could not bind its port, and
    // the first, no longer the one `stop` halts, would be left running after the test.
    up: async () => {
      if (!alive()) await launch();
    },
    stop: async () => {
      await halt();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(500);
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
    socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      socket.destroy();
      // A server that requires a password answers, refusing the PING: it is up.
      resolve(/^(\+PONG|-NOAUTH)/.test(data.toString()));
    });
  });
}

/** A TCP proxy to Redis whose connections can be frozen: bytes stop flowing, nothing is closed. */
export interface FreezableProxy {
  url: string;
  freeze(): void;
  thaw(): void;
  /**
   * The next command a client sends whose bytes contain `match` reaches Redis only once `during`
   * resolved (what that client sends meanwhile waits behind it): `during` acts between two
   * commands of one client, at a point the test picks.
   */
  holdNext(match: string, during: () => Promise<unknown>): void;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<FreezableProxy> {
  const upstream = new URL(target);
  const pairs = new Set<[Socket, Socket]>();
  let frozen = false;
  let hold: { match: string; during: () => Promise<unknown> } | undefined;
  const server: Server = createServer((client) => {
    const remote = new Socket();
    const pair: [Socket, Socket] = [client, remote];
    pairs.add(pair);
    // The client's bytes in order, those after a held command waiting behind it.
    let sent: Promise<unknown> = Promise.resolve();
    client.on("data", (chunk: Buffer) => {
      if (frozen) return; // while frozen, bytes are lost as on a partitioned link
      const held = hold !== undefined && chunk.includes(hold.match) ? hold : undefined;
      if (held) hold = undefined;
      sent = sent
        .then(held?.during)
        .catch(() => {})
        .then(() => remote.write(chunk));
    });
    remote.on("data", (chunk) => {
      if (!frozen) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      remote.destroy();
      pairs.delete(pair);
    };
    client.on("error", end).on("close", end);
    remote.on("error", end).on("close", end);
    remote.connect(Number(upstream.port || 6379), upstream.hostname);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}${upstream.pathname}`,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
    },
    holdNext: (match, during) => {
      hold = { match, during };
    },
    close: async () => {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Bot 0 in channel c0, and a moderation channel for reports. */
export function clusterOrg(): OrgInput {
  return {
    realm: { name: "Cluster", host: "sandbox.example", moderation_request_channel: "moderation" },
    users: [
      { email: OWNER, full_name: "Olive Owner", role: "owner" },
      { email: MEMBER, full_name: "Mel Member", role: "member" },
    ],
    bots: [{ email: botEmail(0), full_name: "Bot 0", type: "generic", owner: OWNER }],
    channels: [
      { name: "c0", subscribers: [OWNER, MEMBER, botEmail(0)] },
      { name: "moderation", privacy: "private", subscribers: [OWNER] },
    ],
  } as OrgInput;
}

export interface ClusterConfig {
  file: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** One config both instances run: bot b0 on `state.redis` (a URL, or Sentinel) with a short lease. */
export async function writeClusterConfig(
  sandbox: Sandbox,
  options: {
    /** A URL, or Sentinel (`sentinelPassword`: their own password, given in an environment variable). */
    redis: string | { sentinels: string[]; name: string; sentinelPassword?: string };
    prefix: string;
    ttl: string;
    /** The bot's answers name the process that made them (default); false: the same from every one. */
    sign?: boolean;
    /** The account's call budget the bot paces itself to, when not the server's default. */
    rateLimit?: { perMinute: number; perHour: number };
  },
): Promise<ClusterConfig> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-cluster-"));
  const { redis } = options;
  const env: Record<string, string> = { CLUSTER_KEY_B0: sandbox.control.apiKeyOf(botEmail(0)) };
  if (typeof redis === "string") env.CLUSTER_REDIS = redis;
  else if (redis.sentinelPassword !== undefined) env.CLUSTER_SENTINEL_PASSWORD = redis.sentinelPassword;
  const redisYaml =
    typeof redis === "string"
      ? ` \${CLUSTER_REDIS}`
      : `\n    sentinels: ${JSON.stringify(redis.sentinels)}\n    name: ${redis.name}${redis.sentinelPassword !== undefined ? `\n    sentinel_password: \${CLUSTER_SENTINEL_PASSWORD}` : ""}`;
  const text = [
    `server:\n  url: ${sandbox.url}`,
    `state:\n  redis:${redisYaml}\n  prefix: ${options.prefix}`,
    `leases:\n  ttl: ${options.ttl}`,
    "http:\n  listen: 127.0.0.1:0",
    "log:\n  level: debug\n  pretty: false",
    "shutdown_timeout: 2s",
    "longpoll_margin: 1s",
    `bots:\n  b0:\n    module: ${CLUSTER_BOT}\n    email: ${botEmail(0)}\n    api_key: \${CLUSTER_KEY_B0}`,
    ...(options.sign === false ? ["    settings:\n      sign: false"] : []),
    ...(options.rateLimit
      ? [
          `    rate_limit:\n      per_minute: ${options.rateLimit.perMinute}\n      per_hour: ${options.rateLimit.perHour}`,
        ]
      : []),
  ].join("\n");
  const file = path.join(dir, "bothost.yaml");
  await writeFile(file, `${text}\n`);
  return { file, env, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface Instance {
  proc: CliProcess;
  /** The instance's HTTP listener. */
  url: string;
  /** What its "daemon started" line said. */
  started: number;
  standby: string[];
}

/** `bothost run` on the config, once it has started (its bots, or none when they run elsewhere). */
export async function startInstance(config: ClusterConfig): Promise<Instance> {
  const proc = spawnCli(["run", "--config", config.file], { env: config.env });
  const started = await proc.waitForLog((l) => l.msg === "daemon started", 30_000);
  const http = await proc.waitForLog((l) => l.msg === "http listener started");
  return {
    proc,
    url: String(http.url),
    started: Number(started.started),
    standby: (started.standby as string[] | undefined) ?? [],
  };
}

/** POST the cluster bot's inbound webhook with a delivery id. */
export async function postHook(
  instance: Instance,
  deliveryId: string,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${instance.url}/webhooks/b0/hook`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${HOOK_TOKEN}`,
      "content-type": "application/json",
      "x-delivery-id": deliveryId,
    },
    body: JSON.stringify({ delivery: deliveryId }),
  });
  return { status: res.status, body: await res.json() };
}

/** Successful report calls per message id, from the sandbox's request log. */
export function reportsPerMessage(sandbox: Sandbox): Map<number, number> {
  const counts = new Map<number, number>();
  for (const r of sandbox.control.requests) {
    const m = /^\/messages\/(\d+)\/report$/.exec(r.path);
    if (r.method === "POST" && m && r.status === 200)
      counts.set(Number(m[1]), (counts.get(Number(m[1])) ?? 0) + 1);
  }
  return counts;
}

/** Undelivered scheduled messages with `content`, and how many were ever created. */
export function bookings(sandbox: Sandbox, content: string): { pending: number; created: number } {
  const pending = sandbox.control
    .scheduled()
    .filter((s) => s.content === content && s.delivered !== true && s.failed !== true).length;
  const created = sandbox.control.requests.filter(
    (r) => r.method === "POST" && r.path === "/scheduled_messages" && r.status === 200,
  ).length;
  return { pending, created };
}

/** A cluster on a redis-server of its own (see {@link useOwnRedisCluster}). */
export interface OwnRedisCluster {
  redis: OwnRedis;
  sandbox: Sandbox;
  config: ClusterConfig;
}

/**
 * The lifecycle of a test file running `bothost run` instances: dist/ must be built; after each
 * test every daemon is killed, then what the test opened (given to the returned function) is
 * closed, the last opened first.
 */
export function useClusterCleanup(): (close: () => Promise<unknown>) => void {
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(assertBuilt);
  afterEach(async () => {
    await killAll();
    for (const close of closers.splice(0).reverse()) await close();
  });
  return (close) => void closers.push(close);
}

/** A sandbox and a cluster config on `redis` (see writeClusterConfig), each closed after the test. */
export async function openCluster(
  opened: (close: () => Promise<unknown>) => void,
  options: Parameters<typeof writeClusterConfig>[1],
) {
  const sandbox = await startE2eSandbox(clusterOrg());
  opened(() => sandbox.stop());
  const config = await writeClusterConfig(sandbox, options);
  opened(() => config.cleanup());
  return { sandbox, config };
}

/**
 * A cluster on a redis-server of its own (to stop and restart it): `start` makes the Redis, the
 * sandbox and the config, closed after each test (see useClusterCleanup).
 */
export function useOwnRedisCluster(): (options: { prefix: string; ttl: string }) => Promise<OwnRedisCluster> {
  const opened = useClusterCleanup();
  return async ({ prefix, ttl }) => {
    const redis = await startOwnRedis();
    opened(() => redis.stop());
    return { redis, ...(await openCluster(opened, { redis: redis.url, prefix, ttl })) };
  };
}

/**
 * The same on the shared Redis (`REDIS_URL`, see redis.ts), under a prefix of the test's own,
 * dropped after each test.
 */
export function useSharedRedisCluster(
  name: string,
): (options: { ttl: string }) => Promise<{ sandbox: Sandbox; config: ClusterConfig }> {
  const opened = useClusterCleanup();
  return async ({ ttl }) => {
    const prefix = uniquePrefix(name);
    opened(() => dropPrefix(prefix));
    return openCluster(opened, { redis: redisUrl, prefix, ttl });
  };
}

/**
 * Point the config's bot at a module of its own next to the config, which answers "task …"
 * messages with "<tag> handled <id>"; the returned function writes it again with another tag
 * (a changed module for a reload).
 */
export async function taggedModule(
  config: ClusterConfig,
  tag: string,
): Promise<(tag: string) => Promise<void>> {
  const module = path.join(path.dirname(config.file), "bot.mjs");
  const write = (t: string) =>
    writeFile(
      module,
      `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content.startsWith("task"),
    (ctx) => ctx.reply("${t} handled " + ctx.event.message.id));
} };\n`,
    );
  await write(tag);
  const text = await readFile(config.file, "utf8");
  await writeFile(config.file, text.replace(/module: .*/, "module: ./bot.mjs"));
  return write;
}

/** The state of the instance's first bot as its `/readyz` says it. */
export async function readyzState(url: string): Promise<string | undefined> {
  const body = (await (await fetch(`${url}/readyz`)).json()) as { bots: { state: string }[] };
  return body.bots[0]?.state;
}

/** Redis at `url` loses every key (FLUSHALL), and every connection to it drops. */
export async function flushAll(url: string): Promise<void> {
  const admin = new Redis(url);
  try {
    await admin.flushall();
    await admin.call("CLIENT", "KILL", "TYPE", "normal").catch(() => {});
  } finally {
    admin.disconnect();
  }
}

/**
 * Once bot b0's cursor is kept (under `prefix`), Redis at `url` loses every key, and `content` is
 * sent to c0 > Misc while the bot is stopped: the next start's first read of messages (the newest
 * message, taken as where to begin when the ledger is new; or the catch-up) is held until then.
 */
export async function loseKeysThenSend(url: string, prefix: string, sandbox: Sandbox, content: string) {
  const store = await RedisStore.open({ url, prefix });
  try {
    const runtime = store.namespace("b0").namespace("runtime");
    await expect.poll(() => runtime.get("cursor"), { timeout: 10_000 }).toBeTypeOf("number");
  } finally {
    await store.close();
  }
  sandbox.control.delay(3_600_000, { paths: [/^\/messages$/] });
  await flushAll(url);
  await sandbox.control.waitFor(() => sandbox.control.delayed() === 1, { timeoutMs: 20_000 });
  send(sandbox, content, "c0", "Misc");
  sandbox.control.delay(0);
}
