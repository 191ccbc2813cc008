/**
 * Sentinels stopped while the primary stays up: the store still works, but the next failover
 * cannot happen. The status says how many of the configured Sentinels answer (and that too few
 * do for a failover), and the log says it once per change, not at each check. A primary, a
 * replica and three Sentinels, each a real redis-server of the test's own (skipped without
 * redis-server on PATH).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { redisLine } from "../../src/http/daemon-status.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import type { SentinelTarget } from "../../src/state/redis-url.ts";
import { SentinelWatch, TOO_FEW_SENTINELS } from "../../src/state/sentinel-vote.ts";
import { freePort, hasRedisServer } from "../support/cluster.ts";

const available = hasRedisServer();
if (!available) console.warn("sentinels reached: redis-server is not on PATH: skipped");

const NAME = "reached";
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

function server(args: string[], cwd: string): ChildProcess {
  const child = spawn("redis-server", args, { cwd, stdio: "ignore" });
  cleanups.push(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
  });
  return child;
}

async function answers(port: number, password?: string): Promise<boolean> {
  const c = new Redis({
    port,
    password,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  c.on("error", () => {});
  try {
    await c.connect();
    return (await c.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

/**
 * A primary with one replica, watched by three Sentinels (quorum 2). `password`: the Sentinels'
 * `requirepass`; `strayLast`: the last Sentinel monitors another server under the same name.
 */
async function topology(
  o: { password?: string; strayLast?: boolean } = {},
): Promise<{ target: SentinelTarget; sentinels: ChildProcess[]; ports: number[]; stray?: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-reached-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const data = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir];
  const [primary, replica] = [await freePort(), await freePort()];
  server(["--port", String(primary), ...data], dir);
  await expect.poll(() => answers(primary), { timeout: 10_000 }).toBe(true);
  server(["--port", String(replica), ...data, "--replicaof", "127.0.0.1", String(primary)], dir);
  await expect.poll(() => answers(replica), { timeout: 10_000 }).toBe(true);
  const stray = o.strayLast ? await freePort() : undefined;
  if (stray) {
    server(["--port", String(stray), ...data], dir);
    await expect.poll(() => answers(stray), { timeout: 10_000 }).toBe(true);
  }
  const ports: number[] = [];
  const sentinels: ChildProcess[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const file = path.join(dir, `sentinel-${port}.conf`);
    const conf = [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor ${NAME} 127.0.0.1 ${i === 2 && stray ? stray : primary} 2`,
      ...(o.password ? [`requirepass ${o.password}`] : []),
    ];
    await writeFile(file, `${conf.join("\n")}\n`);
    sentinels.push(server([file, "--sentinel"], dir));
    await expect.poll(() => answers(port, o.password), { timeout: 10_000 }).toBe(true);
    ports.push(port);
  }
  const target = { sentinels: ports.map((p) => `127.0.0.1:${p}`), name: NAME };
  return {
    target: o.password ? { ...target, sentinelPassword: o.password } : target,
    sentinels,
    ports,
    ...(stray ? { stray } : {}),
  };
}

function recordingLog() {
  const lines: { level: string; msg: string; obj: object }[] = [];
  const at = (level: string) => (obj: object, msg?: string) =>
    void lines.push({ level, msg: msg ?? "", obj });
  return { lines, warn: at("warn"), info: at("info") };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

describe.skipIf(!available)("the Sentinels reached", () => {
  it("the status shows how many answer, and too few for a failover once two of three are stopped", {
    timeout: 60_000,
  }, async () => {
    const { target, sentinels } = await topology();
    const store = await RedisStore.open({ url: target, prefix: "reached", commandTimeoutMs: 5_000 });
    cleanups.push(() => store.close());
    await expect.poll(() => store.redisStatus().sentinelsReached?.answered, { timeout: 10_000 }).toBe(3);
    expect(redisLine(store.redisStatus())).toContain(
      `through Sentinel (master "${NAME}", 3 of 3 Sentinels answering)`,
    );

    await stop(sentinels[1]!);
    await stop(sentinels[2]!);
    // The store's own check runs every 5 s.
    await expect.poll(() => store.redisStatus().sentinelsReached?.answered, { timeout: 15_000 }).toBe(1);
    expect(store.redisStatus().sentinelsReached).toEqual({
      answered: 1,
      of: 3,
      needed: 2,
      silent: [target.sentinels[1], target.sentinels[2]],
    });
    expect(redisLine(store.redisStatus())).toContain(
      `1 of 3 Sentinels answering, too few for a failover (it needs 2; silent: ${target.sentinels[1]}, ${target.sentinels[2]})`,
    );
  });

  it("logs a warn line when too few answer, once per change, not at each check", {
    timeout: 60_000,
  }, async () => {
    const { target, sentinels } = await topology();
    const log = recordingLog();
    const watch = new SentinelWatch(target, 1_000, log);
    expect((await watch.check()).answered).toBe(3);
    expect(log.lines).toEqual([]); // all answering: nothing to say

    await stop(sentinels[0]!);
    expect((await watch.check()).answered).toBe(2);
    expect(log.lines.map((l) => [l.level, l.msg])).toEqual([["info", "the Sentinels answering changed"]]);
    await stop(sentinels[1]!);
    await watch.check();
    await watch.check();
    await watch.check();
    const warns = log.lines.filter((l) => l.level === "warn");
    expect(warns.map((l) => l.msg)).toEqual([TOO_FEW_SENTINELS]);
    expect(warns[0]!.obj).toMatchObject({ answered: 1, of: 3, needed: 2, master: NAME });
  });

  it("a Sentinel slower than 1 s to answer counts as answering: too few is said only of those down", {
    timeout: 60_000,
  }, async () => {
    const { target, sentinels } = await topology();
    await stop(sentinels[1]!); // really down: refuses connections
    // Frozen while the store's first check asks it (at open), resumed 2 s later: slow, not silent.
    sentinels[2]!.kill("SIGSTOP");
    cleanups.push(async () => void sentinels[2]!.kill("SIGCONT"));
    const store = await RedisStore.open({ url: target, prefix: "reached", commandTimeoutMs: 5_000 });
    cleanups.push(() => store.close());
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    sentinels[2]!.kill("SIGCONT");
    await expect.poll(() => store.redisStatus().sentinelsReached, { timeout: 10_000 }).toBeDefined();
    expect(store.redisStatus().sentinelsReached).toEqual({
      answered: 2,
      of: 3,
      needed: 2,
      silent: [target.sentinels[1]],
    });
  });

  it("a Sentinel whose password changed is said to refuse the authentication, naming the setting", {
    timeout: 60_000,
  }, async () => {
    const password = "sentinel-secret-1";
    const { target, ports } = await topology({ password });
    const watch = new SentinelWatch(target, 1_000, undefined);
    expect((await watch.check()).answered).toBe(3);
    const admin = new Redis({ port: ports[1], password, lazyConnect: true });
    cleanups.push(async () => admin.disconnect());
    await admin.connect();
    await admin.call("ACL", "SETUSER", "default", "resetpass", ">another-one");
    const reached = await watch.check();
    expect(reached).toMatchObject({ answered: 2, silent: [] });
    expect(reached.refusing).toEqual([
      { sentinel: target.sentinels[1], why: expect.stringContaining("WRONGPASS") },
    ]);
    const line = redisLine({
      sentinel: { name: NAME, sentinels: [...target.sentinels] },
      sentinelsReached: reached,
      failovers: 0,
      replicaConfirmed: false,
    });
    expect(line).toContain(`${target.sentinels[1]} refuses the authentication`);
    expect(line).toContain("state.redis.sentinel_password");
    expect(line).not.toContain(password);
  });

  it("a Sentinel naming another primary than the others is said to", { timeout: 60_000 }, async () => {
    const { target, stray } = await topology({ strayLast: true });
    const reached = await new SentinelWatch(target, 1_000, undefined).check();
    expect(reached).toMatchObject({
      answered: 3,
      otherPrimary: [{ sentinel: target.sentinels[2], names: `127.0.0.1:${stray}` }],
    });
    const line = redisLine({
      sentinel: { name: NAME, sentinels: [...target.sentinels] },
      sentinelsReached: reached,
      failovers: 0,
      replicaConfirmed: false,
    });
    expect(line).toContain(
      `${target.sentinels[2]} names another primary (127.0.0.1:${stray}) than most Sentinels`,
    );
  });
});
