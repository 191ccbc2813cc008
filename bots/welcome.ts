/**
 * welcome: greets every new member of the organization by direct message. The text is a saved
 * snippet of the bot's own account, looked up by title (edit the snippet to change the greeting,
 * no restart needed), or the `fallback` text while no such snippet exists.
 *
 * Config:
 * ```yaml
 * bots:
 *   welcome:
 *     module: ./bots/welcome.ts
 *     email: welcome-bot@chat.example.org
 *     api_key: ${WELCOME_BOT_API_KEY}
 *     settings:
 *       snippet: Welcome                # title of a saved snippet of the bot's account (optional)
 *       fallback: "Welcome aboard, {name}! Say hi in #**general**."
 *       greet_guests: true              # default true
 * ```
 * Placeholders, in the snippet and the fallback alike: {name} (full name), {mention} (a silent
 * mention, `@_**Name|id**`). Each member is greeted once, ever (remembered in the bot's state).
 * New members are seen through `realm_user` events: the greeting goes out while the bot runs.
 * Moderators and above may ask it (in a direct message, or mentioning it) `greeted`: how many so far.
 */
import { defineBot } from "bothost";
import { z } from "zod";

export default defineBot({
  settings: z.object({
    /** Title of the bot's saved snippet holding the greeting. */
    snippet: z.string().trim().min(1).max(60).optional(),
    /** The greeting while the snippet is missing (or when none is configured). */
    fallback: z.string().trim().min(1).max(10_000),
    /** Greet guests too. */
    greet_guests: z.boolean().default(true),
  }),
  setup(bot, settings) {
    bot.track("snippets");

    bot.on("realm_user", async (ctx) => {
      const { op, person } = ctx.event;
      if (op !== "add") return;
      const p = person as {
        user_id: number;
        full_name?: string;
        is_bot?: boolean;
        is_active?: boolean;
        role?: number;
      };
      if (p.is_bot || p.is_active === false || (p.role === 600 && !settings.greet_guests)) return;
      // Once per member, ever: an account that becomes visible again is not greeted twice.
      const key = `greeted:${p.user_id}`;
      if (!(await ctx.state.setIfAbsent(key, Date.now()))) return;
      try {
        const snippet = settings.snippet ? await ctx.snippets.get(settings.snippet) : undefined;
        const name = p.full_name ?? "there";
        const fields: Record<string, string> = { name, mention: `@_**${name}|${p.user_id}**` };
        const text = (snippet?.content ?? settings.fallback).replace(
          /\{(\w+)\}/g,
          (all, k: string) => fields[k] ?? all,
        );
        await ctx.send({ type: "direct", to: [p.user_id], content: text });
        ctx.log.info({ userId: p.user_id, fromSnippet: snippet !== undefined }, "greeted a new member");
      } catch (err) {
        await ctx.state.delete(key); // not greeted after all: a later add event may try again
        throw err;
      }
    });

    bot.command(
      "greeted",
      { description: "how many members the bot has greeted", allow: "moderator" },
      async (ctx) => {
        const greeted = await ctx.state.list("greeted:");
        await ctx.reply(`${greeted.length} member${greeted.length === 1 ? "" : "s"} greeted so far.`);
      },
    );
  },
});
