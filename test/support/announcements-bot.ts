/**
 * The shipped announcements bot (bots/announcements.ts) for the scheduler harness, and an
 * announcement of it. It imports "bothost", which resolves to dist/: run `npm run build` first
 * (`npm test` does).
 */
import announcements from "../../bots/announcements.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";

export const definition = announcements as unknown as BotDefinition<never, never>;

/** The bot's settings with these announcements (parsed as the config's would be). */
export const settings = (list: unknown[]) =>
  (announcements.settings as { parse(v: unknown): unknown }).parse({ announcements: list });

/** Every Monday 10:00 New York (15:00 UTC in early March), its text a saved snippet of the bot's. */
export const rules = {
  id: "rules",
  cron: "0 10 * * MON",
  timezone: "America/New_York",
  channel: "general",
  topic: "house rules",
  snippet: "House rules",
};
