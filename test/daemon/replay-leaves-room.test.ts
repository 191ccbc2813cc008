/**
 * A bulk replay of dead letters (`bothost failed retry --all`) leaves the account's call budget
 * room for the live traffic: the letters are replayed one at a time per bot, so a person writing
 * to the bot meanwhile is answered before the replays are over, not after every replay's send has
 * taken its turn in the budget. A daemon in this process against the sandbox over HTTP, its rate
 * limits on (the bot's account allowed 5 calls a minute, the client planning with the same), on a
 * held test clock (the budget's pacing moves only with it). Order is read from the sandbox's
 * messages, in the order it took the sends.
 *
 * The replayed run's calls (an event's letter's or a cron job's) wait in the budget's background
 * lane: a person's message received while they wait is answered before them, not behind every one
 * of them.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { BotContext } from "../../src/pipeline/context.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import type { MessageEvent } from "../../src/wire/events.ts";
import {
  closeGatedDaemon,
  type GatedDaemon,
  type GatedDaemonOptions,
  startGatedDaemon,
} from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "replay-bot@sandbox.example";
const LETTERS = 12;
let up: GatedDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

/** A daemon whose bot's account is allowed 5 calls a minute, its client planning with the same. */
async function startLimited(
  name: string,
  email: string,
  definition: GatedDaemonOptions["definition"],
  clock = new TestClock({ held: true }),
) {
  up = await startGatedDaemon({
    name,
    email,
    fullName: name,
    definition,
    extra: "handler_timeout: 1h\nretries: { attempts: 1 }\nrate_limit: { per_minute: 5, per_hour: 2000 }",
    clock,
  });
  up.sandbox.control.setUserRateLimit(email, [
    [60, 5],
    [3600, 2000],
  ]);
  return up;
}

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
  const daemon = await startLimited("replay", BOT, echo);
  const { sandbox, clock, running } = daemon;
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
  daemon.dm("live");
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

const PARTS = 12;

/**
 * A bot whose letter's run sends a long answer in parts at once (`sendPart`), so that they wait
 * for the budget together; a message "live" from another person is answered with `ctx.reply`.
 */
function partsBot(sendPart: (ctx: BotContext, content: string) => Promise<unknown>) {
  const bot = {
    liveAsked: false,
    fails: true,
    definition: defineBot({
      setup(b) {
        b.on("message", async (ctx) => {
          if (ctx.text === "live") {
            bot.liveAsked = true;
            await ctx.reply("ack live");
            return;
          }
          if (bot.fails) throw new Error("the backend is down");
          await Promise.all(Array.from({ length: PARTS }, (_, i) => sendPart(ctx, `part ${i + 1}`)));
        });
      },
    }),
  };
  return bot;
}

/**
 * The letter of `bot` replayed, a live message sent while its parts wait: what the bot said, in
 * order. `keep`: keeps the letter (default: a message the bot fails on); `heldClock`: the daemon's.
 */
async function liveAmongParts(
  name: string,
  email: string,
  bot: ReturnType<typeof partsBot>,
  keep: (daemon: GatedDaemon) => unknown = (daemon) => daemon.dm("old"),
  heldClock?: TestClock,
) {
  const daemon = await startLimited(name, email, bot.definition, heldClock);
  const { sandbox, clock, running } = daemon;
  await keep(daemon);
  await expect.poll(async () => (await running.daemon.letters.list()).length, { timeout: 15_000 }).toBe(1);
  await clock.advance(61_000);
  bot.fails = false;
  await running.daemon.letters.retry({ all: true });
  // The replay's first parts take the minute's calls; the others wait for the next minutes.
  await expect.poll(() => botSaid(sandbox, email).length, { timeout: 15_000 }).toBe(5);
  // Another person: a conversation of its own, not queued behind the replay's run.
  sandbox.control.createUser({ email: `other-${name}@sandbox.example`, full_name: "Other" });
  sandbox.control.sendAs(`other-${name}@sandbox.example`, { type: "direct", to: [email], content: "live" });
  // The bot's polls are paced within the budget too: the message arrives within seconds.
  for (let s = 0; s < 45 && !bot.liveAsked; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(bot.liveAsked).toBe(true);
  for (let s = 0; s < 600 && botSaid(sandbox, email).length < PARTS + 1; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await expect.poll(() => botSaid(sandbox, email).length, { timeout: 15_000 }).toBe(PARTS + 1);
  await expect.poll(async () => (await running.daemon.letters.list()).length, { timeout: 15_000 }).toBe(0);
  return botSaid(sandbox, email);
}

it("a person writing while a replay's calls wait for the budget is answered before them", async () => {
  const said = await liveAmongParts(
    "giving",
    "giving-bot@sandbox.example",
    partsBot((ctx, content) => ctx.reply(content)),
  );
  // The live answer is among the next minute's calls (made at the same instant, taken in any
  // order), not after the replay's last part.
  expect(said.indexOf("ack live")).toBeGreaterThanOrEqual(5);
  expect(said.indexOf("ack live")).toBeLessThan(10);
});

it("a replay's ctx.api calls made without ctx.signal give way to a live reply too", async () => {
  // The lane follows the run, not whether the handler passed the run's signal.
  const direct = (ctx: BotContext, content: string) =>
    ctx.api.messages.send({ type: "direct", to: [(ctx.event as MessageEvent).message.sender_id], content });
  const said = await liveAmongParts("calling", "calling-bot@sandbox.example", partsBot(direct));
  expect(said.indexOf("ack live")).toBeGreaterThanOrEqual(5);
  expect(said.indexOf("ack live")).toBeLessThan(10);
});

const ASKING = "asking-bot@sandbox.example";
let askingFails = true;
const asking = defineBot({
  setup(bot) {
    bot.on("message", async (ctx) => {
      if (ctx.text === "ask") {
        await ctx.prompt("Which colour?", { timeout: "1h" });
        await ctx.reply("got it");
        return;
      }
      if (askingFails) throw new Error("the backend is down");
      await Promise.all(Array.from({ length: PARTS }, (_, i) => ctx.reply(`part ${i + 1}`)));
    });
  },
});

it("a person's answer to a waiting dialog is handled live while a replay's calls wait for the budget", async () => {
  const daemon = await startLimited("asking", ASKING, asking);
  const { sandbox, clock, running } = daemon;
  sandbox.control.createUser({ email: "asker@sandbox.example", full_name: "Asker" });
  const asker = (content: string) =>
    sandbox.control.sendAs("asker@sandbox.example", { type: "direct", to: [ASKING], content });
  asker("ask");
  await expect.poll(() => botSaid(sandbox, ASKING), { timeout: 15_000 }).toEqual(["Which colour?"]);
  daemon.dm("old");
  // The question renewed the bot's queue (for deletions) once the minute's calls were free again.
  for (let s = 0; s < 120 && (await running.daemon.letters.list()).length === 0; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await expect.poll(async () => (await running.daemon.letters.list()).length, { timeout: 15_000 }).toBe(1);
  await clock.advance(61_000);
  askingFails = false;
  await running.daemon.letters.retry({ all: true });
  await expect.poll(() => botSaid(sandbox, ASKING).length, { timeout: 15_000 }).toBe(6);
  // The answer resumes the dialog's run from its log: the person waits for it, as for any reply.
  asker("blue");
  for (let s = 0; s < 600 && botSaid(sandbox, ASKING).length < PARTS + 2; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await expect.poll(() => botSaid(sandbox, ASKING).length, { timeout: 15_000 }).toBe(PARTS + 2);
  const said = botSaid(sandbox, ASKING);
  const lastPart = Math.max(...said.map((text, i) => (text.startsWith("part") ? i : -1)));
  expect(said.indexOf("got it")).toBeGreaterThan(0);
  expect(said.indexOf("got it")).toBeLessThan(lastPart);
});

/** A bot whose nightly job sends a long answer in parts at once; a message "live" is answered with `ctx.reply`. */
function nightlyPartsBot() {
  const bot = {
    liveAsked: false,
    fails: false,
    definition: defineBot({
      setup(b) {
        // Its occurrences fall outside the test's clock: it runs only as its kept letter's replay.
        b.cron("0 3 * * *", { id: "nightly" }, async (ctx) => {
          // Through ctx.api, without ctx.signal: the lane follows the run.
          const part = (i: number) =>
            ctx.api.messages.send({
              type: "direct",
              to: ["member@sandbox.example"],
              content: `part ${i + 1}`,
            });
          await Promise.all(Array.from({ length: PARTS }, (_, i) => part(i)));
        });
        b.on("message", async (ctx) => {
          if (ctx.text !== "live") return;
          bot.liveAsked = true;
          await ctx.reply("ack live");
        });
      },
    }),
  };
  return bot;
}

it("a cron job's letter's replay gives way to a live reply too", async () => {
  const at = "2026-03-02T03:00:00.000Z";
  const keepNightly = (daemon: GatedDaemon) =>
    daemon.running.daemon.letters.of("nightly").add({
      source: "job",
      event: { type: "cron_job", job: "nightly", scheduledFor: at, firedAt: at, catchUp: false },
      error: new Error("the backend for nightly is down"),
      attempts: 1,
      firstFailedAt: at,
      lastFailedAt: at,
    });
  const said = await liveAmongParts(
    "nightly",
    "nightly-bot@sandbox.example",
    nightlyPartsBot(),
    keepNightly,
    new TestClock({ held: true, start: "2026-03-02T07:00:00Z" }),
  );
  expect(said.indexOf("ack live")).toBeGreaterThanOrEqual(5);
  expect(said.indexOf("ack live")).toBeLessThan(10);
});
