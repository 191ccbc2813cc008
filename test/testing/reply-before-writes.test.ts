/**
 * docs/guide/testing.md: a reply can come before its run is over, so a test that reads the run's
 * `ctx.state` writes from another conversation waits for the asking message to be handled first.
 */
import { defineBot } from "bothost";
import { expect, test } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";

test("the run's writes apply when its handler returns; handled() waits for them, the reply does not", async ({
  runBot,
}) => {
  let release: () => void = () => {};
  const afterReply = new Promise<void>((resolve) => {
    release = resolve;
  });
  const poll = defineBot({
    setup(bot) {
      bot.on("message", { contains: "vote yes" }, async (ctx) => {
        await ctx.reply("Counted.");
        await afterReply; // the rest of a handler's work after its reply
        await ctx.state.update<number>("yes", (n) => (n ?? 0) + 1);
      });
      bot.on("message", { contains: "tally" }, async (ctx) => {
        await ctx.reply(`yes: ${(await ctx.state.get<number>("yes")) ?? 0}`);
      });
    },
  });
  const bot = await runBot({ bot: poll, name: "poll" });
  const tally = async () =>
    (await bot.ask(OWNER, { type: "direct", to: [bot.email], content: "tally" })).content;

  const vote = bot.post(MEMBER, { type: "channel", to: "general", topic: "poll", content: "vote yes" });
  expect((await bot.nextReply({ after: vote })).content).toBe("Counted.");
  expect(await tally()).toBe("yes: 0");
  release();
  await bot.handled(vote);
  expect(await tally()).toBe("yes: 1");
});
