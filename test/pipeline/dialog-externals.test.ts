/**
 * `ctx.external` in a dialog, called again after a question: the call past the dialog's log is
 * made, not handed the result of the one the log holds. Before, a replay numbered its externals
 * from 1 past the values its log handed back, so the second call took the first call's record
 * (while the bot's effect records live) and never ran: `rates 10 10`. A crash
 * between a call and the question's log still finds the call's record and does not call again. A
 * real daemon in this process against the sandbox over HTTP, on a held test clock.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "rates-bot@sandbox.example";
/** The external calls made so far. */
let calls = 0;

const rates = defineBot({
  setup(bot) {
    bot.command("quote", async (ctx) => {
      const before = await ctx.external("rate", () => ++calls * 10);
      await ctx.prompt("Amount?", { timeout: "30d" });
      const after = await ctx.external("rate", () => ++calls * 10);
      await ctx.prompt("Confirm?", { timeout: "30d" });
      const last = await ctx.external("rate", () => ++calls * 10);
      await ctx.reply(`rates ${before} ${after} ${last}`);
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

const said = () => botSaid(up!.sandbox, BOT);

it("an external called again after each question is called each time, once", async () => {
  calls = 0;
  up = await startGatedDaemon({
    name: "rates",
    email: BOT,
    fullName: "Rates",
    definition: rates,
    extra: "handler_timeout: 1h",
    clock: new TestClock({ held: true }),
  });
  up.dm("quote");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe("Amount?");
  up.dm("100");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe("Confirm?");
  // A restart replays nothing made: the dialog waits at its question, each call kept.
  await up.restart();
  up.dm("yes");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe("rates 10 20 30");
  expect(calls).toBe(3);
  expect(said()).toEqual(["Amount?", "Confirm?", "rates 10 20 30"]);
});
