/** A bot that asks the server to send "tea time" 5 minutes on (a scheduled message), and says so. */
import { defineBot } from "bothost";

export const reminder = defineBot({
  setup(bot) {
    bot.on("message", { direct: true }, async (ctx) => {
      const at = ctx.now() + 5 * 60_000;
      await ctx.schedule.at({ to: [ctx.event.message.sender_id], content: "tea time", at });
      await ctx.reply("I will remind you in 5 minutes.");
    });
  },
});
