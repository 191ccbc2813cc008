/**
 * How `bot.cron` is declared, against the sandbox with the testing kit's clock moved: the options
 * may be left out (`bot.cron(expression, handler)`), and a handler given where the options go, or
 * no handler, stops the setup with a message saying which argument is wrong.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

let clock: TestClock;
let sandbox: Sandbox;
beforeEach(async () => {
  // 12:01 UTC: the next "*/5" occurrence is 12:05.
  clock = new TestClock({ start: "2026-03-02T12:01:00Z" });
  sandbox = await startSandbox({ clock });
});
afterEach(() => sandbox.stop());

it("bot.cron(expression, handler) runs the handler on the schedule, in UTC", async () => {
  const ticker = defineBot({
    setup(bot) {
      bot.cron("*/5 * * * *", async (ctx) => {
        await ctx.send({
          type: "channel",
          to: "general",
          topic: "ticks",
          content: `tick at ${ctx.job.scheduledFor.toISOString()} (${ctx.job.id})`,
        });
      });
    },
  });
  const bot = await runBot(sandbox, { bot: ticker, name: "ticker", clock });
  try {
    await clock.advance(5 * 60_000);
    expect((await bot.nextReply()).content).toBe("tick at 2026-03-02T12:05:00.000Z (*/5 * * * * UTC)");
  } finally {
    await bot.stop();
  }
});

describe("a wrong call stops the setup, naming the argument", () => {
  const starting = (setup: (bot: BotApi<undefined>) => void) =>
    runBot(sandbox, { bot: defineBot({ setup }), name: "wrong", clock });
  /** The kit's message for a refused call of this file's setup: its place, then `problem`. */
  const refused = (problem: string) =>
    new RegExp(
      `^the bot did not start: test/bot/cron-declaration\\.test\\.ts:\\d+:\\d+: ${problem.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
    );

  it("a handler where the options go, with more after it", async () => {
    await expect(
      starting((bot) =>
        // @ts-expect-error the handler in the options' place
        bot.cron("*/5 * * * *", async () => {}, { timezone: "Europe/Berlin" }),
      ),
    ).rejects.toThrow(
      refused(
        'bot.cron("*/5 * * * *"): the second argument is a function where the options were expected; call bot.cron(expression, handler) or bot.cron(expression, { timezone, missed, id }, handler).',
      ),
    );
  });

  it("options without a handler", async () => {
    await expect(
      // @ts-expect-error no handler
      starting((bot) => bot.cron("*/5 * * * *", { timezone: "Europe/Berlin" })),
    ).rejects.toThrow(
      refused(
        'bot.cron("*/5 * * * *"): the handler (the last argument) must be a function (ctx) => …, got undefined.',
      ),
    );
  });

  it("a webhook's handler where its options go", async () => {
    await expect(
      // @ts-expect-error a webhook needs options
      starting((bot) => bot.webhook("deploys", async () => {})),
    ).rejects.toThrow(
      'bot.webhook("deploys"): the second argument is a function where the options were expected; a webhook needs { verify: … } before its handler',
    );
  });
});
