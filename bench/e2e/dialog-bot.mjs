// The dialogs bench's bot: in its channel, "ask" starts a two-question dialog (`ctx.prompt`, a
// day to answer each), "hi" is answered at once with no dialog (the baseline's traffic), and
// the command `ping` (with a mention) answers "pong".
export default {
  events: ["message"],
  setup(bot) {
    bot.command("ping", { description: "answers pong" }, (ctx) => ctx.reply("pong"));
    bot.on("message", async (ctx) => {
      const text = ctx.event.message.content.replace(/<\/?p>/g, "");
      if (text === "hi") return ctx.reply("noted");
      if (text !== "ask") return;
      await ctx.prompt("What did you do yesterday?", { timeout: "1d" });
      await ctx.prompt("And today?", { timeout: "1d" });
      await ctx.reply("thanks");
    });
  },
};
