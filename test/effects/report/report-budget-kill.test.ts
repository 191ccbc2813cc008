/**
 * A report whose call waits for the account's rate budget, the process killed meanwhile: the
 * claim (kept through a kill, counted as made) must not be taken before the call can leave, or
 * the run again is told `earlier: true` of a report the server never got, nor may another call
 * take the report's start between its claim and its call. Public kit, sandbox over HTTP, held
 * clock (the budget's wait runs on it).
 */
import { defineBot } from "bothost";
import { type BotFixtures, createBotTest, expect } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const test = createBotTest({ clock: { held: true } });

const reports = (sandbox: BotFixtures["sandbox"]) =>
  sandbox.control.messages().filter((m) => String(m.content).includes("reported a message sent by"));

/** A call waits for the next minute (longer than the handler's timeout, which budget waits pause). */
const waiting = (clock: BotFixtures["clock"]) => clock.pendingDelays().some((ms) => ms > 30_000);

/**
 * Moves the clock a minute on each time the bot's run waits for the budget (a call waiting for
 * the next minute), never while it is mid-call, where its handler_timeout would run out, until
 * the bot replied.
 */
async function untilReplied(
  bot: { replies(): readonly unknown[] },
  clock: BotFixtures["clock"],
): Promise<void> {
  for (let i = 0; i < 5 && bot.replies().length === 0; i++) {
    await expect.poll(() => bot.replies().length > 0 || waiting(clock)).toBe(true);
    if (bot.replies().length === 0) await clock.advance(60_000);
  }
}

const reporter = defineBot({
  setup(bot) {
    bot.on("message", { contains: "cheap watches" }, async (ctx) => {
      // Spends what is left of the minute's calls, so the report's call has to wait.
      const bucket = ctx.api.budget.of("GET", "/users/me");
      while (bucket.nextStartAt() <= ctx.now()) await ctx.api.users.me();
      const r = await ctx.report(ctx.event.message.id, "spam");
      await ctx.send({ type: "direct", to: [OWNER], content: `report: ${JSON.stringify(r)}` });
    });
  },
});

test("a report killed while it waits for the rate budget is made at the next start", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const bot = await runBot({
    bot: reporter,
    name: "mod",
    config: "rate_limit: { per_minute: 20, per_hour: 2000 }",
  });
  const id = bot.post(MEMBER, { type: "channel", to: "general", topic: "sales", content: "cheap watches" });
  // The report's wait (up to a minute) for the minute's calls to leave their window.
  await expect.poll(() => waiting(clock)).toBe(true);
  await bot.stop({ crash: true });
  await bot.start();
  await untilReplied(bot, clock);
  await bot.handled(id);
  expect(reports(sandbox)).toHaveLength(1);
  expect(bot.replies().map((m) => m.content)).toEqual(['report: {"reported":true}']);
});

/** What the racing bot's run got so far: its report, the other call. */
const done: string[] = [];

const racer = defineBot({
  setup(bot) {
    bot.on("message", { contains: "cheap watches" }, async (ctx) => {
      // Spends all but one of the minute's calls: the report, and another call asked for while
      // the report is on its way, both want that one.
      const bucket = ctx.api.budget.of("GET", "/users/me");
      const signal = ctx.signal; // a call's wait for the budget is then no part of the handler's time
      while (bucket.snapshot().usedMinute < bucket.limits.perMinute - 1) await ctx.api.users.me({ signal });
      const reporting = ctx.report(ctx.event.message.id, "spam");
      const other = ctx.api.users.me({ signal }).then(() => done.push("other"));
      const r = await reporting;
      done.push("report");
      await other;
      await ctx.send({ type: "direct", to: [OWNER], content: `report: ${JSON.stringify(r)}` });
    });
  },
});

test("a report whose call's start another call takes first, killed while it waits, is made at the next start", async ({
  runBot,
  sandbox,
  clock,
}) => {
  done.length = 0;
  const bot = await runBot({
    bot: racer,
    name: "racer",
    config: "rate_limit: { per_minute: 20, per_hour: 2000 }",
  });
  const id = bot.post(MEMBER, { type: "channel", to: "general", topic: "sales", content: "cheap watches" });
  // The other call took the minute's last call; the report waits (up to a minute) for the next.
  await expect.poll(() => done.length > 0 && waiting(clock)).toBe(true);
  expect(done).toEqual(["other"]);
  await bot.stop({ crash: true });
  await bot.start();
  await untilReplied(bot, clock);
  await bot.handled(id);
  expect(reports(sandbox)).toHaveLength(1);
  expect(bot.replies().map((m) => m.content)).toEqual(['report: {"reported":true}']);
});
