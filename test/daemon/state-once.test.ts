/**
 * `ctx.state` writes apply once per event through a real daemon and sandbox, on the file store
 * and on Redis (when one answers): a handler retried after failures, or replayed from the dead
 * letters, counts once; its reads see its own writes; two conversations updating one key both
 * count; `ctx.state.immediate` writes even from runs that fail.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { BotContext } from "../../src/pipeline/context.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "counter-bot@sandbox.example";
const RETRIES = "retries: { attempts: 3, backoff: 50ms, max_backoff: 100ms }";

const world = useSandbox({ bots: { [BOT]: "Counter" } });
const post = (content: string, topic = "t") =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic, content }).id;
const answers = () => world.messagesFrom(BOT).map((m) => String(m.content));

const prefixes: string[] = [];
const stores: Array<[string, () => Promise<StateBackend | undefined>]> = [
  ["file store", async () => undefined],
];
if (await redisReachable()) {
  stores.push([
    "Redis",
    () => {
      const prefix = uniquePrefix("state-once");
      prefixes.push(prefix);
      return RedisStore.open({ url: redisUrl, prefix });
    },
  ]);
} else {
  console.warn(`state-once: ${noRedisMessage}`);
}
afterAll(async () => {
  for (const prefix of prefixes) await dropPrefix(prefix);
});

/**
 * A bot whose "count" messages add one to `count`, answer with what the run sees and how many
 * runs there were (`immediate`), and fail while `fail(text, run)` says so; "read" answers `count`.
 */
function counter(fail: (text: string, run: number) => boolean, extra?: (bot: BotApi) => void) {
  const runs = new Map<string, number>();
  const definition = defineBot({
    setup(bot: BotApi) {
      extra?.(bot);
      bot.on("message", { sender: MEMBER, contains: "count" }, async (ctx) => {
        const text = ctx.event.message.content;
        const run = (runs.get(text) ?? 0) + 1;
        runs.set(text, run);
        const runsSoFar = await ctx.state.immediate.update<number>(`runs ${text}`, (n) => (n ?? 0) + 1);
        const count = await ctx.state.update<number>("count", (n) => (n ?? 0) + 1);
        const seen = await ctx.state.get<number>("count");
        if (fail(text, run)) throw new Error(`run ${run} fails`);
        await ctx.reply(`${text}: count ${count}, seen ${seen}, runs ${runsSoFar}`);
      });
      bot.on("message", { sender: MEMBER, contains: "read" }, async (ctx) => {
        await ctx.reply(`read: count ${(await ctx.state.get<number>("count")) ?? 0}`);
      });
    },
  });
  return { definition, runs };
}

describe.each(stores)("on the %s", (_name, openStore) => {
  const start = async (definition: ReturnType<typeof counter>["definition"], extra = RETRIES) => {
    const store = await openStore();
    return world.daemon({ counter: { email: BOT, definition, extra } }, store ? { store } : {});
  };

  it("a handler that fails twice, then succeeds, counts once; its reads see its own writes", async () => {
    const { definition, runs } = counter((text, run) => text === "count 1" && run < 3);
    await start(definition);
    post("count 1", "a");
    post("read", "a");
    await expect
      .poll(answers, { timeout: 10_000 })
      .toEqual(["count 1: count 1, seen 1, runs 3", "read: count 1"]);
    expect(runs.get("count 1")).toBe(3);
  });

  it("counts once across a dead-letter replay; the failed runs left nothing", async () => {
    let broken = true;
    const { definition } = counter((text) => broken && text === "count 2");
    const d = await start(definition);
    post("count 2", "a");
    await expect.poll(async () => (await d.daemon.letters.list()).length, { timeout: 10_000 }).toBe(1);
    post("read", "b");
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["read: count 0"]);
    broken = false;
    expect(await d.daemon.letters.retry({ all: true })).toEqual({ done: ["counter/1"], missing: [] });
    await expect.poll(answers, { timeout: 10_000 }).toContain("count 2: count 1, seen 1, runs 4");
    await expect.poll(async () => d.daemon.letters.list(), { timeout: 5_000 }).toEqual([]);
    post("read", "b");
    await expect.poll(answers, { timeout: 10_000 }).toContain("read: count 1");
  });

  it("two conversations updating one key at the same time both count", async () => {
    // Each run stages its update, then waits until the other has staged its own: both read 0.
    let staged = 0;
    let release: () => void = () => {};
    const bothStaged = new Promise<void>((resolve) => {
      release = resolve;
    });
    const definition = defineBot({
      setup(bot: BotApi) {
        bot.on("message", { sender: MEMBER, contains: "inc" }, async (ctx: BotContext) => {
          const mine = await ctx.state.update<number>("count", (n) => (n ?? 0) + 1);
          if (++staged === 2) release();
          await bothStaged;
          await ctx.reply(`inc saw ${mine}`);
        });
        bot.on("message", { sender: MEMBER, contains: "read" }, async (ctx) => {
          await ctx.reply(`read: count ${(await ctx.state.get<number>("count")) ?? 0}`);
        });
      },
    });
    await start(definition);
    post("inc", "a");
    post("inc", "b");
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["inc saw 1", "inc saw 1"]);
    // A reply is on the server before its run's writes apply: a read in the same conversation
    // waits for that run's commit, so reading in "a" and then in "b" sees both.
    post("read", "a");
    await expect.poll(() => answers().length, { timeout: 10_000 }).toBe(3);
    post("read", "b");
    await expect.poll(() => answers().length, { timeout: 10_000 }).toBe(4);
    expect(answers()[3]).toBe("read: count 2");
  });
});
