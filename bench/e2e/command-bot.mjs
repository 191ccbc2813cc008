// The end-to-end bench's bot with commands: the counter bot's handler, behind three commands
// (arguments declared with zod, one limited to moderators) that the served messages never name.
// Every message passes the command router first, as in a bot that has commands and also reads
// the conversation: the row measures what routing costs the messages that are not commands.
import { z } from "zod";
import counter from "./counter-bot.mjs";

export default {
  events: ["message"],
  setup(bot) {
    bot.command(
      "remind",
      {
        description: "remind you later",
        args: { minutes: z.number().int().min(1), text: z.string() },
        rest: true,
      },
      (ctx) => ctx.reply(`in ${ctx.args.minutes} min`),
    );
    bot.command("stats", { description: "what the bot counted" }, (ctx) => ctx.reply("none"));
    bot.command("purge-stats", { description: "reset", allow: "moderator" }, (ctx) => ctx.reply("reset"));
    counter.setup(bot);
  },
};
