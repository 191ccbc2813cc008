/**
 * A failed handler's later attempt whose reply waits for the account's rate budget is not stuck
 * either: its `handler_timeout` stands still while the wait lasts, as the first attempt's does
 * (rate-budget-timeout.test.ts). A daemon in this process against the sandbox over HTTP, on a
 * held test clock (the budget's pacing, the pauses and the timeouts move only with it).
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

let retried = 0;
const paced = defineBot({
  setup(bot) {
    bot.on("message", async (ctx) => {
      if (ctx.text === "flaky" && ++retried === 1) throw new Error("first attempt fails");
      await ctx.reply(`ack ${ctx.text}`);
    });
  },
});

it("a later attempt whose reply waits for the minute's budget is not timed out meanwhile", async () => {
  retried = 0;
  up = await startGatedDaemon({
    name: "paced",
    email: BOT,
    fullName: "Paced",
    definition: paced,
    extra:
      "handler_timeout: 5s\nretries: { attempts: 3, backoff: 1s }\nrate_limit: { per_minute: 4, per_hour: 2000 }",
    clock: new TestClock({ held: true }),
  });
  const { sandbox, clock, running } = up;
  // Four calls a minute: the budget spent by the first replies, the retried one waits most of a
  // minute for it, past the 5 s timeout.
  const texts = ["m1", "m2", "m3", "m4", "flaky"];
  for (const text of texts) up.dm(text);
  for (let s = 0; s < 180 && botSaid(sandbox, BOT).length < texts.length; s += 1) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await expect.poll(() => botSaid(sandbox, BOT), { timeout: 15_000 }).toEqual(texts.map((t) => `ack ${t}`));
  expect(running.logged("handler timed out")).toEqual([]);
  expect(running.logged("running it again after a pause")).toHaveLength(1);
  expect(retried).toBe(2);
  // The retried reply did wait for the budget, longer than the timeout.
  const waits = running.logged("a call waited for the account's rate budget");
  expect(waits.at(-1)?.waitedMs).toBeGreaterThan(5_000);
});
