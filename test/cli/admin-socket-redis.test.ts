/**
 * With `state.redis` the admin socket is in the per-user folder, named after the config file:
 * `status` and `failed` reach a local daemon there; with no daemon running, `failed` works on the
 * Redis store directly.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminSocketPath } from "../../src/config/admin-socket-path.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, killAll, repoRoot, runCli, spawnCli } from "../support/cli.ts";
import { botEmail, orgWithBots, send, startE2eSandbox } from "../support/e2e-daemon.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) process.stderr.write(`admin socket on Redis state: ${noRedisMessage}\n`);

const MODULE = path.join(repoRoot, "test/fixtures/admin/fails-once.mjs");
const prefix = uniquePrefix("admin");
let sandbox: Sandbox;
let dir: string;
let file: string;
let key: string;

beforeAll(async () => {
  if (!reachable) return;
  assertBuilt();
  sandbox = await startE2eSandbox(orgWithBots(1));
  key = sandbox.control.apiKeyOf(botEmail(0));
  dir = await mkdtemp(path.join(tmpdir(), "bothost-admin-redis-"));
  file = path.join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  redis: ${redisUrl}\n  prefix: ${prefix}\nlog:\n  pretty: false\n` +
      `bots:\n  greeter:\n    module: ${MODULE}\n    email: ${botEmail(0)}\n    api_key: \${GREETER_BOT_API_KEY}\n` +
      "    retries:\n      attempts: 1\n",
  );
});

afterAll(async () => {
  if (!reachable) return;
  await killAll();
  await sandbox?.stop();
  await dropPrefix(prefix);
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!reachable)("the admin socket of a daemon on Redis state", () => {
  it("answers status and failed; once the daemon stops, failed works on the store", async () => {
    const env = { GREETER_BOT_API_KEY: key };
    const daemon = spawnCli(["run", "-c", file], { env });
    await daemon.waitForLog((l) => l.msg === "daemon started");
    const socket = adminSocketPath({ redis: true, configFile: file });
    expect((await stat(socket)).mode & 0o777).toBe(0o600);

    const status = await runCli(["status", "--json", "-c", file]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ pid: daemon.pid, bots: [{ name: "greeter" }] });

    send(sandbox, "fail one");
    send(sandbox, "fail two");
    const ids = async () =>
      JSON.parse((await runCli(["failed", "list", "--json", "-c", file], { env })).stdout).map(
        (l: { id: string }) => l.id,
      );
    await expect.poll(ids, { timeout: 15_000, interval: 200 }).toEqual(["greeter/1", "greeter/2"]);
    const viaDaemon = await runCli(["failed", "retry", "greeter/1", "-c", file]);
    expect(viaDaemon.stdout).toBe("Retry requested for 1: greeter/1 (the daemon handles them now)\n");

    daemon.kill("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
    expect(existsSync(socket)).toBe(false);
    // No daemon: straight in Redis, which needs the whole config (the key variable included).
    const viaStore = await runCli(["failed", "retry", "greeter/2", "-c", file], { env });
    expect(viaStore.stdout).toBe(
      "Retry requested for 1: greeter/2 (handled by the daemon running the bot, or at its next start)\n",
    );
    for (const text of [status.stdout, viaDaemon.stdout, viaStore.stdout, daemon.stdout(), daemon.stderr()]) {
      expect(text.includes(key)).toBe(false);
    }
  });
});
