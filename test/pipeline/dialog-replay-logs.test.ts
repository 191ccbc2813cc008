/**
 * A dialog's handler runs again from its start at each answer, replaying its log; what it logs
 * through `ctx.log` on the way to the step its log ends at was logged when those steps ran, so a
 * replay logs it no second time: each line once, across answers, a restart, and a `back`.
 * Against the sandbox over HTTP in a real daemon.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";

const order = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      ctx.log.info({ step: "begin" }, "an order");
      const size = await ctx.prompt("Which size?", { back: "back" });
      ctx.log.info({ step: "size", size: size.text }, "a size");
      const count = await ctx.prompt("How many?", { back: "back" });
      ctx.log.info({ step: "count", count: count.text }, "a count");
      await ctx.reply(`${count.text} x ${size.text}`);
    });
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  const clock = new TestClock();
  sandbox = await startSandbox({ clock });
  bot = await runBot(sandbox, { bot: order, name: "order", clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string): SendAsInput => ({ type: "direct", to: [bot.email], content });
/** The steps the handler logged, in order, with what it read. */
const logged = () =>
  bot
    .logs()
    .filter((l) => l.step !== undefined)
    .map((l) => [l.step, l.size ?? l.count].filter((v) => v !== undefined).join(":"));

it("logs each line of a dialog's handler once, across answers, a restart and a back", async () => {
  expect((await bot.ask(MEMBER, dm("order"))).content).toBe("Which size?");
  const small = bot.post(MEMBER, dm("small"));
  expect((await bot.nextReply({ after: small })).content).toBe("How many?");
  // The crash comes between answers: a run it cuts short is an attempt that runs (and logs) again.
  await bot.handled(small);
  await bot.restart({ crash: true });
  // Back to the first question: its answer is replaced, and what follows it runs (and logs) anew.
  expect((await bot.ask(MEMBER, dm("back"))).content).toBe("Which size?");
  expect((await bot.ask(MEMBER, dm("large"))).content).toBe("How many?");
  expect((await bot.ask(MEMBER, dm("2"))).content).toBe("2 x large");
  expect(logged()).toEqual(["begin", "size:small", "size:large", "count:2"]);
});

it("a bot.catch sees an error thrown while a dialog's run replays, and what it logs is logged", async () => {
  let broken = false;
  const fragile = defineBot({
    setup(b) {
      b.command("order", async (ctx) => {
        await ctx.prompt("Which size?");
        // Thrown on the way to the newest answer: the run is still replaying here.
        if (broken) throw new Error("the size list is gone");
        await ctx.prompt("How many?");
        await ctx.reply("ordered");
      });
      b.catch((err, ctx) => ctx.log.warn({ caught: (err as Error).message }, "order failed"));
    },
  });
  await bot.stop();
  bot = await runBot(sandbox, { bot: fragile, name: "fragile", config: "retries: { attempts: 1 }" });
  expect((await bot.ask(MEMBER, dm("order"))).content).toBe("Which size?");
  expect((await bot.ask(MEMBER, dm("small"))).content).toBe("How many?");
  broken = true;
  const two = bot.post(MEMBER, dm("2"));
  await expect(bot.handled(two)).rejects.toThrow(/the size list is gone/);
  expect(bot.logs().filter((l) => l.caught !== undefined)).toEqual([
    expect.objectContaining({ caught: "the size list is gone", msg: "order failed" }),
  ]);
});
