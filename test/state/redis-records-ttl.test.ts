/**
 * On Redis, expiry runs on Redis's own clock: the lifetime given to a bot's effect records and
 * applied-state markers is checked by their keys' PTTL instead. After a message's handler replied
 * and wrote state through a real daemon (sandbox over HTTP, state on Redis), every key of its
 * records and markers lives max(6 h, `replay.max_age` + 1 h), and none is left without a TTL;
 * a weekly cron occurrence's live until the job's next occurrence + 1 h.
 */
import { Redis } from "ioredis";
import { afterAll, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "tally-bot@sandbox.example";
const HOUR = 3_600_000;

const world = useSandbox({ bots: { [BOT]: "Tally" } });
const reachable = await redisReachable();
if (!reachable) console.warn(`redis-records-ttl: ${noRedisMessage}`);
const prefixes: string[] = [];
afterAll(async () => {
  for (const prefix of prefixes) await dropPrefix(prefix);
});

const RETRIES = "retries: { attempts: 2, backoff: 50ms, max_backoff: 100ms }";
const failed = new Set<string>();
let retried = 0;

/** "count" replies and counts; "flaky" does too, and fails its first run after both (a retry). */
const counter = defineBot({
  setup(bot) {
    bot.on("message", { sender: MEMBER, contains: "count" }, async (ctx) => {
      await ctx.state.update<number>("count", (n) => (n ?? 0) + 1);
      await ctx.reply("Counted.");
    });
    bot.on("message", { sender: MEMBER, contains: "flaky" }, async (ctx) => {
      await ctx.state.update<number>("flaky", (n) => (n ?? 0) + 1);
      await ctx.reply("Flaky.");
      const id = `${ctx.event.message.id}`;
      if (!failed.has(id)) {
        failed.add(id);
        throw new Error("the first run fails after its reply");
      }
      retried++;
    });
  },
});

/** Each key under `prefix` whose name matches `part`, with its PTTL (-1: no TTL). */
async function ttls(prefix: string, part: RegExp): Promise<Array<[string, number]>> {
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on("error", () => {});
  try {
    await client.connect();
    const found: Array<[string, number]> = [];
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) if (part.test(key)) found.push([key, await client.pttl(key)]);
    } while (cursor !== "0");
    return found;
  } finally {
    client.disconnect();
  }
}

/**
 * Both records and markers were written under `prefix`, and each such key lives `keptMs` less at
 * most ten minutes (the test's own run): never without a TTL (PTTL -1), never the 6-hour floor.
 */
async function expectKept(prefix: string, keptMs: number): Promise<void> {
  const records = await ttls(prefix, /[:/](effects|applied)\//);
  expect(records.some(([key]) => /[:/]effects\//.test(key))).toBe(true);
  expect(records.some(([key]) => /[:/]applied\//.test(key))).toBe(true);
  for (const [key, pttl] of records) {
    expect({ key, within: pttl > keptMs - 10 * 60_000 && pttl <= keptMs }).toEqual({ key, within: true });
  }
}

it.skipIf(!reachable).each([
  ["the default max_age (24 h)", RETRIES, 25 * HOUR],
  ["a max_age of 3 days", `${RETRIES}\nreplay: { max_age: 3d }`, 73 * HOUR],
])("%s: the message's records and markers are kept max_age + 1 h", async (_, extra, keptMs) => {
  retried = 0;
  const prefix = uniquePrefix("records-ttl");
  prefixes.push(prefix);
  const store = await RedisStore.open({ url: redisUrl, prefix });
  const daemon = await world.daemon({ tally: { email: BOT, definition: counter, extra } }, { store });
  const send = (content: string) =>
    world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content });
  send("count");
  send("flaky");
  const said = () => world.messagesFrom(BOT).map((m) => String(m.content));
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(2);
  await expect.poll(() => retried, { timeout: 15_000 }).toBe(1);
  await daemon.stop();
  expect(said().sort()).toEqual(["Counted.", "Flaky."]);
  await expectKept(prefix, keptMs);
});

it.skipIf(!reachable)(
  "a weekly cron occurrence's records and marker: kept until its next one + 1 h",
  async () => {
    const prefix = uniquePrefix("records-ttl");
    prefixes.push(prefix);
    const store = await RedisStore.open({ url: redisUrl, prefix });
    const clock = new TestClock({ held: true, start: "2026-03-02T07:00:00Z" });
    let done = 0;
    const weekly = defineBot({
      setup(bot) {
        bot.cron("0 8 * * 1", { id: "weekly" }, async (ctx) => {
          await ctx.state.update<number>("reports", (n) => (n ?? 0) + 1);
          await ctx.send({ type: "channel", to: "general", topic: "week", content: "Weekly report" });
          done++;
        });
      },
    });
    const daemon = await world.daemon({ herald: { email: BOT, definition: weekly } }, { store, clock });
    await clock.advance(HOUR);
    await expect.poll(() => done, { timeout: 15_000 }).toBe(1);
    await daemon.stop();
    await expectKept(prefix, 7 * 24 * HOUR + HOUR);
  },
);
