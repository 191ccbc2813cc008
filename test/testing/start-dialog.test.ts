/**
 * A dialog `ctx.startDialog` began, as testing.md tells a test to wait for it: its question's
 * deadline is polled (the started dialog runs apart from the run that started it), and the kit's
 * clock passes it.
 */
import { defineBot, PromptError } from "bothost";
import { expect, test } from "bothost/testing/vitest";

const OWNER = "owner@sandbox.example";

const barista = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      try {
        const size = await ctx.prompt("Which size?", { timeout: "10m" });
        await ctx.reply(`one ${size.text}`);
      } catch (err) {
        if (!(err instanceof PromptError && err.code === "PROMPT_TIMEOUT")) throw err;
        await ctx.reply("No answer.");
      }
    });
    bot.command("ask-me", async (ctx) => {
      await ctx.startDialog(ctx.sender.id, "order");
    });
  },
});

test("a started dialog's deadline is polled, then passed on the kit's clock", async ({ runBot, clock }) => {
  const bot = await runBot({ bot: barista, name: "barista" });
  const asked = bot.post(OWNER, { type: "direct", to: [bot.email], content: "ask-me" });
  const question = await bot.nextReply({ after: asked });
  expect(question.content).toBe("Which size?");
  await bot.handled(asked);
  await expect.poll(() => bot.dialogs()[0]?.deadline).toBeDefined();
  await clock.advance(11 * 60_000);
  expect((await bot.nextReply({ after: question.id })).content).toBe("No answer.");
  await expect.poll(() => bot.dialogs()).toEqual([]);
});
