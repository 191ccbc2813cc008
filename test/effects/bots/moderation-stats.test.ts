/**
 * The shipped moderation bot's `stats` as a bot author tests it with bothost/testing/vitest: its
 * 24 hours are the daemon's clock (ctx.now()), so a test that moves the clock moves them too.
 * It imports "bothost", which resolves to dist/: run `npm run build` first.
 */
import { createBotTest, expect } from "bothost/testing/vitest";
import moderation from "../../../bots/moderation.ts";

const MOD = "mia@sandbox.example";
const test = createBotTest({ users: [{ email: MOD, full_name: "Mia Mod", role: "moderator" }] });

test("stats counts the messages flagged in the last 24 hours of the clock", async ({ runBot, clock }) => {
  const bot = await runBot({
    bot: moderation,
    name: "moderation",
    settings: { rules: { keywords: { words: ["scam"] } } },
  });
  const id = bot.post("member@sandbox.example", {
    type: "channel",
    to: "general",
    topic: "t",
    content: "a scam",
  });
  await bot.handled(id);
  const stats = () => bot.ask(MOD, { type: "direct", to: [bot.email], content: "stats" });
  expect((await stats()).content).toBe(
    "Messages flagged in the last 24 hours:\n* blocked word (`keywords`): 1",
  );
  await clock.advance(25 * 3_600_000);
  expect((await stats()).content).toBe("No message broke a rule in the last 24 hours.");
});
