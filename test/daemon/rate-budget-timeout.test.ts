/**
 * A handler whose reply waits for the account's rate budget is not stuck: its `handler_timeout`
 * stands still while the wait lasts (as in the catch-up after an outage, every reply queued on
 * the minute's budget), and counts again after it. A daemon in this process against the sandbox
 * over HTTP, on a held test clock (the budget's pacing and the timeout move only with it).
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "paced-bot@sandbox.example";
let up: GatedDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

const paced = defineBot({
  setup(bot) {
    bot.on("message", async (ctx) => {
      if (ctx.text === "spin") {
        // Stuck for real: waits on nothing the budget gives (the timeout still ends it).
        await new Promise(() => {});
      }
      await ctx.reply(`ack ${ctx.text}`);
    });
  },
});

const poll = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 15_000 });

it("replies queued on the minute's budget go out in turn, none timed out; a stuck handler still is", async () => {
  up = await startGatedDaemon({
    name: "paced",
    email: BOT,
    fullName: "Paced",
    definition: paced,
    extra: "handler_timeout: 5s\nrate_limit: { per_minute: 4, per_hour: 2000 }",
    clock: new TestClock({ held: true }),
  });
  const { sandbox, clock, running } = up;
  const texts = ["m1", "m2", "m3", "m4", "m5", "m6", "m7"];
  for (const text of texts) up.dm(text);
  // Four a minute: the later replies wait 15 s each for the budget, past the 5 s timeout.
  for (let s = 0; s < 120 && botSaid(sandbox, BOT).length < texts.length; s += 1) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await poll(() => botSaid(sandbox, BOT)).toEqual(texts.map((t) => `ack ${t}`));
  expect(running.logged("handler timed out")).toEqual([]);
  expect(running.logged("handler failed")).toEqual([]);

  // A handler stuck on something else is timed out as before.
  up.dm("spin");
  await poll(async () => {
    await clock.advance(1_000);
    return running.logged("handler timed out").length;
  }).toBe(1);
});
