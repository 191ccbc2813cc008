// The busy-organization bench's bot: it sees every message of its channel (a moderation bot's
// view) and answers only "ping", with "pong <id>".
export default {
  events: ["message"],
  setup(bot) {
    bot.on("message", async (ctx) => {
      if (ctx.event.message.content.replace(/<\/?p>/g, "") !== "ping") return;
      await ctx.reply(`pong ${ctx.event.message.id}`);
    });
  },
};
