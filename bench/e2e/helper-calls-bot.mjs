// The helper-calls bench's bot: each message names the one call its handler makes, and the bot
// replies with what came of it. "reply": the reply alone; "ensure TEXT": ctx.snippets.ensure;
// "book": ctx.schedule.at a day out; "cancel ID": ctx.schedule.cancel.
export default {
  events: ["message"],
  setup(bot) {
    bot.on("message", async (ctx) => {
      const [word, arg] = ctx.text.trim().split(/\s+/);
      if (word === "reply") {
        await ctx.reply("ok");
      } else if (word === "ensure") {
        const { action } = await ctx.snippets.ensure("Bench", arg);
        await ctx.reply(action);
      } else if (word === "book") {
        const { scheduledMessageId } = await ctx.schedule.at({
          to: [ctx.event.message.sender_id],
          content: "later",
          at: ctx.now() + 86_400_000,
        });
        await ctx.reply(`booked ${scheduledMessageId}`);
      } else if (word === "cancel") {
        await ctx.schedule.cancel(Number(arg));
        await ctx.reply("cancelled");
      }
    });
  },
};
