/**
 * Every effect once, through a real daemon against the sandbox: replies whose POST /messages
 * fails before or after the server stored them (503, 500, 502 JSON, an HTML 502, a reset) are
 * sent exactly once; a handler that sent and then threw sends nothing twice, retried or replayed;
 * a booking or a snippet whose create was answered by a failure after the server made it is
 * found on the retry and made no second time; a `ctx.external` call is made once across retries,
 * and across a dead letter's replay after the store's effect records expired; one whose result
 * no record holds (`undefined`) is made once, its event kept as a dead letter at once (before,
 * each of the retries called it again).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { FailOptions } from "../../src/sandbox/faults.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "once-bot@sandbox.example";
const RETRIES = "retries: { attempts: 4, backoff: 50ms, max_backoff: 100ms }";

let running: InProcessDaemon | undefined;

const world = useSandbox({ bots: { [BOT]: "Once" } });

const post = (content: string, topic: string) =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic, content }).id;
const sentByBot = () => world.messagesFrom(BOT).map((m) => String(m.content));
const count = (texts: string[], text: string) => texts.filter((t) => t === text).length;
/**
 * Events accepted and not done with. A handler waiting to run again holds its conversation, so
 * at 0 every event was handled or kept as a dead letter: no retry is left to repeat a send.
 */
const inFlight = () => running?.daemon.bots[0]?.status.inFlight;

const faults: [string, Omit<FailOptions, "paths">][] = [
  ["503 before acting", { status: 503 }],
  ["503 after acting", { status: 503, after: true }],
  ["500 after acting", { status: 500, after: true }],
  ["502 after acting", { status: 502, after: true }],
  ["HTML 502 after acting", { status: 502, nonJson: true, after: true }],
  ["reset after acting", { status: 0, reset: true, after: true }],
  ["reset before acting", { status: 0, reset: true }],
];

/**
 * `definition` started as bot "once" (two attempts) on a new state directory, its daemon's time
 * moved only by the test (through the pause, then to the retry check); "go" posted and its
 * failure kept as a dead letter.
 */
async function keptAsLetter(definition: ReturnType<typeof defineBot>) {
  const stateDir = await mkdtemp(path.join(tmpdir(), "bothost-once-"));
  const bots = {
    once: { email: BOT, definition, extra: "retries: { attempts: 2, backoff: 50ms }" },
  };
  const clock = new ManualClock(Date.now());
  running = await world.daemon(bots, { stateDir, clock });
  post("go", "t");
  const kept = async () => {
    await clock.tick(50);
    return (await running!.daemon.letters.list()).length;
  };
  await expect.poll(kept, { timeout: 10_000 }).toBe(1);
  return { stateDir, bots, clock };
}

describe("a reply whose send fails", () => {
  it.each(faults)("%s is sent exactly once", async (_name, fault) => {
    const echo = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, (ctx) => ctx.reply(`re: ${ctx.event.message.content}`));
      },
    });
    // The daemon's time moves only when the test says: through the wait for a local echo that
    // never comes (the server did not act) and the retries' pauses.
    const clock = new ManualClock(Date.now());
    const moving =
      <T>(read: () => T) =>
      async () => {
        await clock.tick(500);
        return read();
      };
    running = await world.daemon({ once: { email: BOT, definition: echo, extra: RETRIES } }, { clock });
    world.sandbox.control.failNext(1, { ...fault, paths: [/^\/messages$/] });
    post("ping", "a");
    post("pong", "b");
    await expect
      .poll(moving(sentByBot), { timeout: 10_000 })
      .toEqual(expect.arrayContaining(["re: ping", "re: pong"]));
    await expect.poll(moving(inFlight)).toBe(0); // a duplicate would come from a retry
    expect([count(sentByBot(), "re: ping"), count(sentByBot(), "re: pong")]).toEqual([1, 1]);
    expect(await running.daemon.letters.list()).toEqual([]);
    // After acting, the send's own message event (local echo) proves it: the handler never fails.
    const echoed = running.logged("its own message event shows the server stored it");
    const failed = running.logs.filter((l) => l.msg === "handler failed");
    expect([echoed.length, failed.length]).toEqual(fault.after ? [1, 0] : [0, 1]);
  });
});

describe("a handler that sent, then threw", () => {
  it("sends its first message once however often it is retried", async () => {
    let runs = 0;
    const halfway = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          runs++;
          await ctx.reply("step 1");
          if (runs < 3) throw new Error("fails after step 1");
          await ctx.reply("step 2");
        });
      },
    });
    running = await world.daemon({
      once: { email: BOT, definition: halfway, extra: RETRIES },
    });
    post("go", "t");
    await expect.poll(sentByBot, { timeout: 10_000 }).toEqual(["step 1", "step 2"]);
    expect(runs).toBe(3);
  });

  it("calls ctx.external once however often it is retried, handing back the first result", async () => {
    let [runs, calls] = [0, 0];
    const halfway = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          runs++;
          const ticket = await ctx.external("open ticket", async () => ({ id: ++calls }));
          await ctx.reply(`ticket ${ticket.id}`);
          if (runs < 3) throw new Error("fails after the ticket");
          const again = await ctx.external("open ticket", async () => ({ id: ++calls }));
          await ctx.reply(`and ticket ${again.id}`);
        });
      },
    });
    running = await world.daemon({ once: { email: BOT, definition: halfway, extra: RETRIES } });
    post("go", "t");
    await expect.poll(sentByBot, { timeout: 10_000 }).toEqual(["ticket 1", "and ticket 2"]);
    expect([runs, calls]).toEqual([3, 2]);
  });

  it("calls ctx.external once when its result is no JSON: kept as a dead letter at once, not run again", async () => {
    let calls = 0;
    const notify = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          // A JavaScript bot's call that returns nothing: made, its result not one a record holds.
          await ctx.external("notify", (async () => void calls++) as never);
          await ctx.reply("notified");
        });
      },
    });
    running = await world.daemon({ once: { email: BOT, definition: notify, extra: RETRIES } });
    post("go", "t");
    const letters = () => running!.daemon.letters.list();
    await expect.poll(async () => (await letters()).length, { timeout: 10_000 }).toBe(1);
    const [letter] = await letters();
    expect([calls, letter!.attempts, sentByBot()]).toEqual([1, 1, []]);
    expect(letter!.error.message).toMatch(
      /^ctx\.external\("notify"\): the result must be JSON \(got undefined\)/,
    );
  });

  it("replayed from the dead letters after a fix, repeats none of what it had sent", async () => {
    let fixed = false;
    const broken = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          await ctx.reply("step 1");
          if (!fixed) throw new Error("bug after step 1");
          await ctx.reply("step 2");
        });
      },
    });
    const { stateDir, bots } = await keptAsLetter(broken);
    expect((await running!.daemon.letters.list())[0]?.effects).toHaveLength(1);
    fixed = true;
    await running!.daemon.letters.retry({ all: true });
    await expect.poll(sentByBot, { timeout: 10_000 }).toEqual(["step 1", "step 2"]);
    await expect.poll(async () => running!.daemon.letters.list(), { timeout: 5_000 }).toEqual([]);

    // A restart afterwards repeats nothing.
    await running!.stop();
    running = await world.daemon(bots, { stateDir });
    // Started: what it missed was replayed, and the marked letters were looked at; all of it done.
    await expect.poll(inFlight).toBe(0);
    expect(sentByBot()).toEqual(["step 1", "step 2"]);
    await rm(stateDir, { recursive: true, force: true });
  });
});

describe("a dead letter replayed after its effect records expired", () => {
  it("calls ctx.external no second time: the letter carries its result", async () => {
    let [fixed, calls] = [false, 0];
    const broken = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          const ticket = await ctx.external("open ticket", async () => ({ id: ++calls }));
          await ctx.reply(`ticket ${ticket.id}`);
          if (!fixed) throw new Error("bug after the ticket");
          await ctx.reply(`closed ticket ${ticket.id}`);
        });
      },
    });
    const { stateDir, bots, clock } = await keptAsLetter(broken);
    // The store's expiry follows the daemon's clock: moved past the records' 25 hours (the
    // default max_age of 24 h, plus 1), stopped.
    await running!.stop();
    await clock.tick(26 * 3_600_000);
    running = await world.daemon(bots, { stateDir, clock });
    fixed = true;
    await running.daemon.letters.retry({ all: true });
    await expect.poll(sentByBot, { timeout: 10_000 }).toEqual(["ticket 1", "closed ticket 1"]);
    await expect.poll(async () => running!.daemon.letters.list(), { timeout: 5_000 }).toEqual([]);
    expect(calls).toBe(1);
    await rm(stateDir, { recursive: true, force: true });
  });

  it("a replay that fails before its effects keeps them in the letter: the next replay makes none again", async () => {
    let phase: "bug" | "down" | "fixed" = "bug";
    const broken = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          if (phase === "down") throw new Error("the tracker is down");
          await ctx.reply("ticket opened");
          if (phase === "bug") throw new Error("bug after the reply");
          await ctx.reply("ticket closed");
        });
      },
    });
    const { stateDir, bots, clock } = await keptAsLetter(broken);
    await running!.stop();
    await clock.tick(26 * 3_600_000);
    running = await world.daemon(bots, { stateDir, clock });
    phase = "down";
    const [before] = await running.daemon.letters.list();
    await running.daemon.letters.retry({ all: true });
    // Failed again, through its attempts (their pauses on the test clock): kept anew.
    const keptAgain = async () => {
      await clock.tick(50);
      const [letter] = await running!.daemon.letters.list();
      return letter !== undefined && letter.lastFailedAt !== before?.lastFailedAt;
    };
    await expect.poll(keptAgain, { timeout: 10_000 }).toBe(true);
    phase = "fixed";
    await running.daemon.letters.retry({ all: true });
    await expect.poll(sentByBot, { timeout: 10_000 }).toEqual(["ticket opened", "ticket closed"]);
    expect(await running.daemon.letters.list()).toEqual([]);
    await rm(stateDir, { recursive: true, force: true });
  });
});

describe("a booking or a snippet whose create fails after the server acted", () => {
  it.each([
    ["503", { status: 503, after: true }],
    ["HTML 502", { status: 502, nonJson: true, after: true }],
    ["reset", { status: 0, reset: true, after: true }],
  ] as [string, Omit<FailOptions, "paths">][])(
    "%s: the handler's retry finds it made and makes it no second time",
    async (_name, fault) => {
      let runs = 0;
      const keeper = defineBot({
        setup(bot) {
          bot.on("message", { sender: MEMBER }, async (ctx) => {
            runs++;
            const text = ctx.event.message.content;
            await ctx.schedule.at({
              to: "general",
              topic: "later",
              content: `later: ${text}`,
              at: Date.now() + 3_600_000,
            });
            await ctx.snippets.create(`note ${text}`, `saved: ${text}`);
            await ctx.reply("done");
          });
        },
      });
      running = await world.daemon({
        once: { email: BOT, definition: keeper, extra: RETRIES },
      });
      world.sandbox.control.failNext(1, { ...fault, paths: [/^\/scheduled_messages$/] });
      post("a", "t1");
      await expect.poll(sentByBot, { timeout: 10_000 }).toEqual(["done"]);
      world.sandbox.control.failNext(1, { ...fault, paths: [/^\/saved_snippets$/] });
      post("b", "t2");
      await expect.poll(sentByBot, { timeout: 10_000 }).toEqual(["done", "done"]);
      expect(runs).toBe(4);
      const booked = world.sandbox.control.scheduled().map((s) => s.content);
      expect(booked.sort()).toEqual(["later: a", "later: b"]);
      const client = createClient({
        url: world.sandbox.url,
        email: BOT,
        apiKey: world.sandbox.control.apiKeyOf(BOT),
      });
      const { saved_snippets } = await client.savedSnippets.list();
      expect(saved_snippets.map((s) => s.title).sort()).toEqual(["note a", "note b"]);
      expect(running.logged("handler failed; running it again after a pause")).toHaveLength(2);
    },
  );
});
