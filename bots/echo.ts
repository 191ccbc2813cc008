/**
 * echo: the smallest complete bot. It answers direct messages and mentions by repeating what
 * was said (without its own mention; other mentions are kept), and has one command: `shout`.
 *
 * Config:
 * ```yaml
 * bots:
 *   echo:
 *     module: ./bots/echo.ts
 *     email: echo-bot@chat.example.org
 *     api_key: ${ECHO_BOT_API_KEY}
 *     settings: { prefix: "echo: " }   # optional
 * ```
 */
import { defineBot } from "bothost";
import { z } from "zod";

export default defineBot({
  settings: z.object({
    /** Put before every answer. */
    prefix: z.string().max(100).default(""),
  }),
  setup(bot, settings) {
    bot.command(
      "shout",
      { description: "say it louder", args: { text: z.string() }, rest: true, examples: ["shout hello"] },
      (ctx) => ctx.reply(`${settings.prefix}${ctx.args.text.toUpperCase()}`),
    );
    // Everything else addressed to the bot (a direct message, or a mention) is repeated, without
    // the bot's own mention; `help` is generated from the commands.
    bot.on("message", { addressed: true }, (ctx) =>
      ctx.reply(`${settings.prefix}${ctx.text || "(nothing to echo)"}`),
    );
  },
});
