/**
 * A bulk replay of dead letters (`bothost failed retry --all`) leaves the account's call budget
 * room for the live traffic: the letters are replayed one at a time per bot, so a person writing
 * to the bot meanwhile is answered before the replays are over, not after every replay's send has
 * taken its turn in the budget. A daemon in this process against the sandbox over HTTP, its rate
 * limits on (the bot's account allowed 5 calls a minute, the client planning with the same), on a
 * held test clock (the budget's pacing moves only with it). Order is read from the sandbox's
 * messages, in the order it took the sends.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "replay-bot@sandbox.example";
const LETTERS = 12;
let up: GatedDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

let failing = true;
const echo = defineBot({
  setup(bot) {
    bot.on("message", async (ctx) => {
      if (failing) throw new Error("the backend is down");
      await ctx.reply(`ack ${ctx.text}`);
    });
  },
});

it("a person writing during a bulk replay is answered before the replays are over", async () => {
  failing = true;
  up = await startGatedDaemon({
    name: "replay",
    email: BOT,
    fullName: "Replay",
    definition: echo,
    extra: "handler_timeout: 1h\nretries: { attempts: 1 }\nrate_limit: { per_minute: 5, per_hour: 2000 }",
    clock: new TestClock({ held: true }),
  });
  const { sandbox, clock, running } = up;
  sandbox.control.setUserRateLimit(BOT, [
    [60, 5],
    [3600, 2000],
  ]);
  // One letter per person: each its own conversation, so nothing but the replay orders them.
  for (let i = 0; i < LETTERS; i++) {
    const email = `p${i}@sandbox.example`;
    sandbox.control.createUser({ email, full_name: `P${i}` });
    sandbox.control.sendAs(email, { type: "direct", to: [BOT], content: `old ${i}` });
  }
  await expect
    .poll(async () => (await running.daemon.letters.list()).length, { timeout: 15_000 })
    .toBe(LETTERS);
  // The minute's budget is free again when the replay begins.
  await clock.advance(61_000);
  failing = false;
  await running.daemon.letters.retry({ all: true });
  up.dm("live");
  for (let s = 0; s < 400 && botSaid(sandbox, BOT).length < LETTERS + 1; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await expect.poll(() => botSaid(sandbox, BOT).length, { timeout: 15_000 }).toBe(LETTERS + 1);
  const said = botSaid(sandbox, BOT);
  const live = said.indexOf("ack live");
  const lastReplay = Math.max(...said.map((text, i) => (text.startsWith("ack old") ? i : -1)));
  expect(live).toBeGreaterThanOrEqual(0);
  expect(live).toBeLessThan(lastReplay);
  // Every letter was handled, the live message left no letter.
  await expect.poll(async () => (await running.daemon.letters.list()).length, { timeout: 15_000 }).toBe(0);
});
