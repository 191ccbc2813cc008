/**
 * A handler cut by handler_timeout, through a real daemon and sandbox on a held clock: its run is
 * over when its handler returns or throws, not at the timeout. Thrown, it runs again after the
 * pause, counted from then (never alongside the run it abandoned, so a `ctx.external` call that
 * run had under way is made once); returned, its message is handled and its state writes applied.
 * At a first attempt's timeout its conversation moves on; a later attempt holds it until it is over.
 */
import { expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "slow-bot@sandbox.example";
const EXTRA = "retries: { attempts: 3, backoff: 2s, max_backoff: 2s }\nhandler_timeout: 1s";

const world = useSandbox({ bots: { [BOT]: "Slow" } });

const post = (content: string) =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content }).id;
const answers = () => world.messagesFrom(BOT).map((m) => String(m.content));

/** A promise the test settles: the work a handler does without looking at its signal. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

async function start(definition: ReturnType<typeof defineBot>, clock: ManualClock) {
  return world.daemon({ slow: { email: BOT, definition, extra: EXTRA } }, { clock });
}

/** `value` once the daemon's clock moved on by steps of `stepMs` until it holds. */
const polled = <T>(clock: ManualClock, value: () => T | Promise<T>, stepMs = 100) =>
  expect.poll(
    async () => {
      await clock.tick(stepMs);
      return value();
    },
    { timeout: 10_000 },
  );

it("an attempt that outlives its timeout runs again once its handler returned, then after the pause: its call under way is made once", async () => {
  const work = gate();
  let runs = 0;
  let calls = 0;
  const definition = defineBot({
    setup(bot: BotApi) {
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        runs++;
        if (runs === 1) throw new Error("first attempt fails");
        // The call ignores the run's signal: it goes on past the second attempt's timeout.
        const charged = await ctx.external("charge", async () => {
          calls++;
          await work.opened;
          return "charged";
        });
        await ctx.reply(`ok ${charged}`);
      });
    },
  });
  const clock = new ManualClock(Date.now());
  const d = await start(definition, clock);
  post("pay");
  await polled(clock, () => d.logged("handler timed out on a later attempt").length).toBe(1);
  // Long past the timeout and the pause: the abandoned attempt still runs, so no third one.
  for (let s = 0; s < 10; s++) await clock.tick(1_000);
  expect([runs, calls, answers()]).toEqual([2, 1, []]);
  work.open();
  // Its reply refused (its signal aborted), it failed: the third attempt waits for its pause.
  await expect.poll(() => d.logged("running it again after a pause").length, { timeout: 10_000 }).toBe(2);
  expect(d.logged("running it again after a pause")[1]).toMatchObject({ attempt: 2, retryInMs: 2_000 });
  expect(runs).toBe(2);
  await polled(clock, answers).toEqual(["ok charged"]);
  // The third attempt found the call's recorded result: made once, replied once.
  expect([runs, calls]).toEqual([3, 1]);
  expect(await d.daemon.letters.list()).toEqual([]);
});

it("a first attempt that returns after its timeout is the message's outcome: handled, its state written, not run again", async () => {
  const work = gate();
  let runs = 0;
  const definition = defineBot({
    setup(bot: BotApi) {
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        if (ctx.text === "read") {
          await ctx.reply(`seen ${String(await ctx.state.get("seen"))}`);
          return;
        }
        runs++;
        await ctx.state.set("seen", runs);
        await work.opened;
      });
    },
  });
  const clock = new ManualClock(Date.now());
  const d = await start(definition, clock);
  post("slow");
  await polled(clock, () => d.logged("handler timed out").length).toBe(1);
  work.open();
  // Its late return is its outcome: handled once its state writes are applied.
  await polled(clock, async () => (await d.daemon.status()).bots[0]?.handled).toBe(1);
  for (let s = 0; s < 10; s++) await clock.tick(1_000);
  post("read");
  await polled(clock, answers).toEqual(["seen 1"]);
  expect(runs).toBe(1);
  expect(d.logged("running it again after a pause")).toEqual([]);
  expect(await d.daemon.letters.list()).toEqual([]);
});

it("the conversation moves on at a first attempt's timeout, but waits for a later attempt that outlives its own", async () => {
  const work = gate();
  const runs = new Map<string, number>();
  const definition = defineBot({
    setup(bot: BotApi) {
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        const run = (runs.get(ctx.text) ?? 0) + 1;
        runs.set(ctx.text, run);
        const { signal } = ctx;
        // "cut": its first attempt honours its signal, so it is cut at its timeout.
        if (ctx.text === "cut" && run === 1)
          await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
        // "held": its first attempt throws; its second ignores its signal until the test opens the gate.
        if (ctx.text === "held" && run === 1) throw new Error("first attempt fails");
        if (ctx.text === "held" && run === 2) {
          await work.opened;
          throw new Error("second attempt fails late");
        }
        await ctx.reply(`ok ${ctx.text}`);
      });
    },
  });
  const clock = new ManualClock(Date.now());
  const d = await start(definition, clock);
  post("cut");
  post("after cut");
  await polled(clock, () => d.logged("handler timed out").length).toBe(1);
  // Cut at its timeout, its conversation went on: the next message is answered while the clock
  // stands still, before the pause its retry waits for.
  await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok after cut"]);
  await polled(clock, answers).toEqual(["ok after cut", "ok cut"]);
  post("held");
  post("after held");
  await polled(clock, () => d.logged("handler timed out on a later attempt").length).toBe(1);
  for (let s = 0; s < 10; s++) await clock.tick(1_000);
  expect(answers()).toEqual(["ok after cut", "ok cut"]);
  work.open();
  await polled(clock, answers).toEqual(["ok after cut", "ok cut", "ok held", "ok after held"]);
});
