/**
 * How a `bothost failed retry` reaches a running bot. Through the daemon's admin socket: the
 * daemon hands it to the bot at once (its clock never moves here, so no periodic check can be
 * what replayed it). Written to a Redis store by another process: the daemon's one watcher finds
 * it at its next read, one read for all bots every RETRY_CHECK_MS of the daemon's clock.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { Agent, request } from "undici";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { Daemon } from "../../src/daemon/daemon.ts";
import { deadLetterOfficeFor } from "../../src/daemon/dead-letter-office-for.ts";
import { RETRY_CHECK_MS } from "../../src/daemon/retry-watcher.ts";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "retry-bot@sandbox.example";
const world = useSandbox({ bots: { [BOT]: "Retry" } });
const reachable = await redisReachable();
if (!reachable) process.stderr.write(`retry requests on Redis: ${noRedisMessage}\n`);
const prefixes: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const prefix of prefixes) await dropPrefix(prefix);
});

let fixed = false;
const flaky = defineBot({
  setup(bot) {
    bot.on("message", { sender: MEMBER }, async (ctx) => {
      if (!fixed) throw new NoRetry("not fixed yet");
      await ctx.reply(`handled: ${ctx.event.message.content}`);
    });
  },
});

/** A daemon running the flaky bot on `store`, its admin socket in a temp folder, on a clock that never moves. */
async function startDaemon(store: () => Promise<StateBackend>, stateYaml: string) {
  fixed = false;
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-retry-"));
  const file = path.join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${world.sandbox.url}\nstate:\n${stateYaml}\nbots:\n  flaky:\n    module: ./unused.ts\n` +
      `    email: ${BOT}\n    api_key: ${world.sandbox.control.apiKeyOf(BOT)}\n`,
  );
  const config = await loadConfig(file, { env: {} });
  const log = pino({ level: "silent" });
  const socket = path.join(dir, "admin.sock");
  const backend = await store();
  const clock = new ManualClock(Date.now());
  const daemon = new Daemon({
    config,
    bots: [{ name: "flaky", definition: flaky as never, settings: undefined }],
    store: backend,
    log,
    clock,
    adminSocket: { path: socket, ifTaken: "fail" },
  });
  await daemon.start();
  cleanups.push(async () => {
    await daemon.stop();
    await rm(dir, { recursive: true, force: true });
  });
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "one" });
  await expect
    .poll(async () => (await daemon.letters.list()).map((l) => l.id), { timeout: 10_000 })
    .toEqual(["flaky/1"]);
  fixed = true;
  return { daemon, socket, config, log, clock };
}

const replies = () => world.messagesFrom(BOT).map((m) => String(m.content));

async function retryThroughSocket(socket: string, id: string): Promise<unknown> {
  const agent = new Agent({ connect: { socketPath: socket } });
  try {
    const res = await request("http://localhost/admin/failed/retry", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ids: [id] }),
      dispatcher: agent,
    });
    return await res.body.json();
  } finally {
    await agent.close();
  }
}

describe("a retry requested through the admin socket", () => {
  it("replays at once, on the embedded store (no periodic check exists)", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-retry-state-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const { daemon, socket } = await startDaemon(() => FileStore.open(dir), `  path: ${dir}`);
    expect(await retryThroughSocket(socket, "flaky/1")).toEqual({ done: ["flaky/1"], missing: [] });
    await expect.poll(replies, { timeout: 10_000 }).toEqual(["handled: one"]);
    await expect.poll(() => daemon.letters.list(), { timeout: 5_000 }).toEqual([]);
  });
});

describe.skipIf(!reachable)("on Redis state", () => {
  it("a retry through the socket replays at once; one another process writes waits for the watcher's read", async () => {
    const prefix = uniquePrefix("retry");
    prefixes.push(prefix);
    const open = () => RedisStore.open({ url: redisUrl, prefix });
    const { daemon, socket, config, log, clock } = await startDaemon(
      open,
      `  redis: ${redisUrl}\n  prefix: ${prefix}`,
    );

    expect(await retryThroughSocket(socket, "flaky/1")).toEqual({ done: ["flaky/1"], missing: [] });
    await expect.poll(replies, { timeout: 10_000 }).toEqual(["handled: one"]);

    // Another process, with its own connection to the store, marks the next letter.
    fixed = false;
    world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "two" });
    await expect
      .poll(async () => (await daemon.letters.list()).map((l) => l.id), { timeout: 10_000 })
      .toEqual(["flaky/2"]);
    fixed = true;
    const other = await open();
    cleanups.push(() => other.close());
    expect(await deadLetterOfficeFor(config, other, log).retry({ ids: ["flaky/2"] })).toEqual({
      done: ["flaky/2"],
      missing: [],
    });
    // The daemon's clock has not moved: its watcher has not read the store since. A message sent
    // after the retry, in the same conversation, is handled without the letter replayed first.
    world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "three" });
    await expect.poll(replies, { timeout: 10_000 }).toContain("handled: three");
    expect(replies()).toEqual(["handled: one", "handled: three"]);
    await clock.tick(RETRY_CHECK_MS);
    await expect
      .poll(replies, { timeout: 10_000 })
      .toEqual(["handled: one", "handled: three", "handled: two"]);
  });
});
