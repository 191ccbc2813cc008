/**
 * A report whose call waits for the account's rate budget, the process killed meanwhile: the
 * claim (kept through a kill, counted as made) must not be taken before the call can leave, or
 * the run again is told `earlier: true` of a report the server never got. Public kit, sandbox
 * over HTTP, held clock (the budget's wait runs on it).
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const test = createBotTest({ clock: { held: true } });

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
  await expect.poll(() => clock.pendingDelays().some((ms) => ms > 30_000)).toBe(true);
  await bot.stop({ crash: true });
  const start = bot.start();
  const reports = () =>
    sandbox.control.messages().filter((m) => String(m.content).includes("reported a message sent by"));
  for (let i = 0; i < 30 && reports().length === 0; i++) {
    await clock.advance(60_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await start;
  expect(reports()).toHaveLength(1);
  for (let i = 0; i < 10 && bot.replies().length === 0; i++) await clock.advance(60_000);
  await bot.handled(id);
  expect(bot.replies().map((m) => m.content)).toEqual(['report: {"reported":true}']);
});
