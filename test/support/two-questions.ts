/** The two-question survey several dialog tests run against the sandbox, and the queue renewal its first question makes. */
import { expect } from "vitest";
import type { BotApi } from "../../src/index.ts";
import type { TestBot } from "../../src/testing/run-bot.ts";

/** Adds `survey`: asks Q1, says what it noted, asks Q2, says both answers. */
export function surveyCommand(bot: BotApi<undefined>): void {
  bot.command("survey", async (ctx) => {
    const a = await ctx.prompt("Q1?");
    await ctx.reply(`noted ${a.text}`);
    const b = await ctx.prompt("Q2?");
    await ctx.reply(`done: ${a.text} / ${b.text}`);
  });
}

/** A bot's first question renews its queue with the event types dialogs need: resolves once the new one is registered. */
export const renewed = (bot: TestBot) =>
  expect
    .poll(() => bot.logs().find((l) => l.msg === "event queue registered" && l.reason === "event_types"))
    .toBeDefined();
