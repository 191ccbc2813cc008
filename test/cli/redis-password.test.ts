/**
 * A Redis that refuses the password `state.redis` gives (or wants one none was given): `bothost
 * run` and `bothost failed` (with no daemon, it opens the store itself) say the server refused
 * the authentication and why (WRONGPASS, NOAUTH), in one line that never shows the password, and
 * exit 1; not ioredis's "Connection is closed". Needs `redis-server` on PATH (the test runs its
 * own, with `--requirepass`). Sentinels refusing theirs (`state.redis.sentinel_password`) are said
 * the same way, not as Sentinels that never answered.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";
import {
  type ClusterConfig,
  clusterOrg,
  freePort,
  hasRedisServer,
  type OwnRedis,
  startOwnRedis,
  writeClusterConfig,
} from "../support/cluster.ts";
import { startE2eSandbox } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available)
  console.warn("redis password: redis-server is not on PATH (apt-get install redis-server): skipped");

const PASSWORD = "right-pw-4417";
const WRONG = "wrong-pw-9921";
let redis: OwnRedis | undefined;
let sandbox: Sandbox | undefined;
let sentinel: { port: number; child: ChildProcess; dir: string } | undefined;
const configs: ClusterConfig[] = [];

beforeAll(() => {
  if (available) assertBuilt();
});

afterAll(async () => {
  for (const c of configs) await c.cleanup();
  await sandbox?.stop();
  await redis?.stop();
  sentinel?.child.kill("SIGKILL");
  if (sentinel) await rm(sentinel.dir, { recursive: true, force: true });
});

/** The config on `state.redis` with `password` in its URL (none: no password), on database `db`. */
async function configWith(password: string | undefined, db = 0): Promise<ClusterConfig> {
  // Started in the first test (the fixture polls with expect.poll, which only runs in a test).
  redis ??= await startOwnRedis({ requirepass: PASSWORD });
  sandbox ??= await startE2eSandbox(clusterOrg());
  const url = new URL(redis!.url);
  if (password !== undefined) url.password = password;
  url.pathname = `/${db}`;
  const config = await writeClusterConfig(sandbox!, { redis: url.toString(), prefix: "pw", ttl: "3s" });
  configs.push(config);
  return config;
}

const where = () => `redis://127.0.0.1:${new URL(redis!.url).port}/0`;

describe.skipIf(!available)("a Redis refusing the authentication", () => {
  it("a wrong password: run and failed name the refused password, exit 1", async () => {
    const config = await configWith(WRONG);
    const expected = `Redis at ${where()} refused the authentication (state.redis): the password (or user name) given is wrong (WRONGPASS): check the password in the URL (redis://:password@host:port/db). [STATE_UNAVAILABLE]\n`;
    for (const [args, prefix] of [
      [["run"], "bothost"],
      [["failed", "list"], "bothost failed"],
    ] as const) {
      const result = await runCli([...args, "--config", config.file], { env: config.env });
      const stderr = `${prefix}: ${expected}`;
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 1, stderr });
      expect(result.stdout + result.stderr).not.toContain(WRONG);
      expect(hasStackTrace(result.stderr)).toBe(false);
    }
  });

  it("no password: run says the server requires one (NOAUTH), exit 1", async () => {
    const config = await configWith(undefined);
    const result = await runCli(["run", "--config", config.file], { env: config.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `bothost: Redis at ${where()} refused the authentication (state.redis): it requires a password and none was given (NOAUTH): set the password in the URL (redis://:password@host:port/db). [STATE_UNAVAILABLE]\n`,
    );
  });
});

describe.skipIf(!available)("a Redis database the server does not have", () => {
  it("run and failed say so and exit 1, instead of working in database 0", async () => {
    const config = await configWith(PASSWORD, 16);
    const at = `redis://127.0.0.1:${new URL(redis!.url).port}/16`;
    const expected = `Redis at ${at} has no database 16 (state.redis): name one it has (0 to 15 unless its databases setting says more). [STATE_UNAVAILABLE]\n`;
    for (const [args, prefix] of [
      [["run"], "bothost"],
      [["failed", "list"], "bothost failed"],
    ] as const) {
      const result = await runCli([...args, "--config", config.file], { env: config.env });
      const stderr = `${prefix}: ${expected}`;
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 1, stderr });
    }
  });
});

/** One Sentinel with `requirepass`, monitoring a group whose primary need not run. */
async function startSentinel(): Promise<number> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-sentinel-pw-"));
  const file = path.join(dir, "sentinel.conf");
  const monitored = await freePort();
  const conf = [`port ${port}`, "bind 127.0.0.1", `dir ${dir}`, `requirepass ${PASSWORD}`];
  conf.push(`sentinel monitor pwgroup 127.0.0.1 ${monitored} 1`);
  await writeFile(file, `${conf.join("\n")}\n`);
  const child = spawn("redis-server", [file, "--sentinel"], { cwd: dir, stdio: "ignore" });
  sentinel = { port, child, dir };
  return port;
}

describe.skipIf(!available)("Sentinels refusing the authentication", () => {
  it("a wrong or missing sentinel_password: run names it, exits 1, never shows the password", async () => {
    sandbox ??= await startE2eSandbox(clusterOrg());
    const port = await startSentinel();
    const sentinels = [`127.0.0.1:${port}`];
    const where = `sentinel master "pwgroup" (db 0) via 127.0.0.1:${port}`;
    const cases = [
      { password: WRONG, why: "the password (or user name) given is wrong (WRONGPASS): check" },
      { password: undefined, why: "it requires a password and none was given (NOAUTH): set" },
    ];
    for (const { password, why } of cases) {
      const redisTarget = { sentinels, name: "pwgroup", ...(password ? { sentinelPassword: password } : {}) };
      const config = await writeClusterConfig(sandbox, { redis: redisTarget, prefix: "pw", ttl: "3s" });
      configs.push(config);
      const result = await runCli(["run", "--config", config.file], { env: config.env });
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 1,
        stderr: `bothost: Redis at ${where}: the Sentinels refused the authentication (state.redis): ${why} state.redis.sentinel_password. [STATE_UNAVAILABLE]\n`,
      });
      expect(result.stdout + result.stderr).not.toContain(WRONG);
    }
  }, 60_000);
});
