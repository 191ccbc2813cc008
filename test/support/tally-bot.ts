/**
 * The store-health tests' bot: counts each message in its state and answers with the count
 * (`quiet` is recorded and not answered); `size` asks one question.
 */
import { defineBot } from "../../src/bot/define-bot.ts";

export const TALLY_EMAIL = "tally-bot@sandbox.example";

export const tally = defineBot({
  setup(bot) {
    bot.command("size", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await ctx.reply(`${size.text} it is.`);
    });
    bot.on("message", async (ctx) => {
      if (ctx.text === "quiet") return;
      const n = ((await ctx.state.get<number>("n")) ?? 0) + 1;
      await ctx.state.set("n", n);
      await ctx.reply(`${ctx.text}: ${n}`);
    });
  },
});
