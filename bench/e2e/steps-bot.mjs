// The dialog-calls bench's bot: "ask N" asks N questions in turn (`ctx.prompt`, an hour to answer
// each), then says how many answers it got.
export default {
  events: ["message"],
  setup(bot) {
    bot.on("message", async (ctx) => {
      const match = /^ask (\d+)$/.exec(ctx.text.trim());
      if (!match) return;
      const answers = [];
      for (let i = 1; i <= Number(match[1]); i++) {
        answers.push((await ctx.prompt(`Question ${i}?`, { timeout: "1h" })).text);
      }
      await ctx.reply(`got ${answers.length} answers`);
    });
  },
};
