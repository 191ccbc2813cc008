/**
 * The store-health tests' bot: counts each message in its state and answers with the count
 * (`quiet` is recorded and not answered); `size` asks one question.
 */
import { defineBot } from "../../src/bot/define-bot.ts";
import type { TestClock } from "../../src/testing/test-clock.ts";
import { type GatedDaemon, startGatedDaemon } from "./gated-daemon.ts";

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

/** A daemon in this process running the tally bot, with its HTTP listener on a free port. */
export function startTally(clock?: TestClock): Promise<GatedDaemon> {
  return startGatedDaemon({
    name: "tally",
    email: TALLY_EMAIL,
    fullName: "Tally",
    definition: tally,
    global: "http:\n  listen: 127.0.0.1:0",
    ...(clock ? { clock } : {}),
  });
}
