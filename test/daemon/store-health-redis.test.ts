/**
 * What an operator sees while a Redis state store is down: `/readyz` not ready with
 * STATE_UNAVAILABLE, the status naming the Redis (never a password), ready again once it is back
 * (the embedded store's full disk: store-health.test.ts). A Redis of the test's own, shut down and
 * started again; skipped, saying so, without redis-server. A real daemon in this process against
 * the sandbox, its HTTP listener asked over real HTTP, on the test clock.
 */
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { STORE_BACK_LINE, STORE_FAILING_LINE } from "../../src/pipeline/store-health.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { hasRedisServer, type OwnRedis, startOwnRedis } from "../support/cluster.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";
import { TALLY_EMAIL as BOT, tally } from "../support/tally-bot.ts";

/** The case's daemon, sandbox and Redis. */
let onRedis: { running?: InProcessDaemon; sandbox?: Sandbox; redis?: OwnRedis } = {};
afterEach(async () => {
  await onRedis.redis?.up();
  await onRedis.running?.stop();
  await onRedis.sandbox?.stop();
  await onRedis.redis?.stop();
  onRedis = {};
});

async function get(path: string): Promise<{ status: number; body: string }> {
  const res = await request(`${onRedis.running!.daemon.http!.url}${path}`);
  return { status: res.statusCode, body: await res.body.text() };
}

async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
  const { status, body } = await get("/readyz");
  return { status, body: JSON.parse(body) };
}

const withRedis = hasRedisServer();
if (!withRedis)
  console.warn("store-health-redis: redis-server is not on PATH: the Redis outage case skipped");

describe.skipIf(!withRedis)("a Redis outage", () => {
  it("/readyz 503 with STATE_UNAVAILABLE while Redis is down, the status naming the Redis; ready again once it is back", async () => {
    const redis = await startOwnRedis();
    onRedis.redis = redis;
    const clock = new TestClock();
    const sandbox = await startSandbox({ clock });
    onRedis.sandbox = sandbox;
    sandbox.control.createUser({
      email: BOT,
      full_name: "Tally",
      bot: "generic",
      owner: "owner@sandbox.example",
    });
    // Its writes fail within a second while Redis is down (else within the default 10 s).
    const store = await RedisStore.open({
      url: redis.url,
      prefix: "t-store-health",
      commandTimeoutMs: 1_000,
    });
    const running = await startInProcessDaemon(
      sandbox,
      { tally: { email: BOT, definition: tally } },
      { store, clock, global: "http:\n  listen: 127.0.0.1:0" },
    );
    onRedis.running = running;
    const dm = (content: string) =>
      sandbox.control.sendAs("member@sandbox.example", { type: "direct", to: [BOT], content }).id;
    dm("a");
    expect(await saidAtLeast(sandbox, BOT, 1)).toEqual(["a: 1"]);
    await expect.poll(async () => (await readyz()).status).toBe(200);
    await redis.down();
    dm("b");
    await expect.poll(async () => (await readyz()).status, { timeout: 15_000 }).toBe(503);
    expect((await readyz()).body.bots).toMatchObject([
      { bot: "tally", store: { code: "STATE_UNAVAILABLE" } },
    ]);
    const failure = JSON.parse((await get("/admin/status")).body).bots[0].store;
    expect(failure).toMatchObject({
      code: "STATE_UNAVAILABLE",
      error: expect.stringContaining(`Redis at ${redis.url}`),
    });
    expect(running.logged(STORE_FAILING_LINE)).toMatchObject([{ code: "STATE_UNAVAILABLE" }]);
    await redis.up();
    // The run waiting for the store goes again after its pauses: it gets through, and "b" is answered.
    await expect
      .poll(
        async () => {
          await clock.advance(2_000);
          return (await readyz()).status;
        },
        { timeout: 30_000 },
      )
      .toBe(200);
    expect(await saidAtLeast(sandbox, BOT, 2)).toEqual(["a: 1", "b: 2"]);
    expect(running.logged(STORE_BACK_LINE)).toHaveLength(1);
    expect(running.logged(STORE_FAILING_LINE)).toHaveLength(1);
  }, 60_000);
});
