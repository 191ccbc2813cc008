/**
 * echo: the smallest complete bot. It answers direct messages and mentions by repeating what
 * was said (without the mention itself).
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
    // One handler for both: a direct message, or a channel message that mentions the bot.
    bot.on(
      "message",
      (ctx) => ctx.event.message.type === "private" || ctx.event.flags.includes("mentioned"),
      async (ctx) => {
        const text = ctx.event.message.content.replace(/@_?\*\*[^*]+\*\*/g, "").trim();
        await ctx.reply(`${settings.prefix}${text || "(nothing to echo)"}`);
      },
    );
  },
});
