/**
 * A prompt nobody answers in time, against the sandbox over HTTP with the testing kit's clock
 * moved instead of waited for: an uncaught timeout ends the run (no retry asks the person again,
 * no dead letter, one log line), a caught one lets the handler say so, and a late answer reaches
 * the bot's other handlers as an ordinary message at once.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/index.ts";
import { PROMPT_UNANSWERED } from "../../src/pipeline/dialogs/prompt-error.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";
// Far beyond how long a run takes at the real pace, so only clock.advance() ends the wait.
const WAIT = 60_000;

const barista = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size: small or large?", { timeout: WAIT });
      await ctx.reply(`One ${size.text} coffee coming up.`);
    });
    bot.command("polite", async (ctx) => {
      try {
        const size = await ctx.prompt("Which size: small or large?", { timeout: WAIT });
        await ctx.reply(`One ${size.text} coffee coming up.`);
      } catch (err) {
        if (!(err instanceof PromptError)) throw err;
        await ctx.reply("No answer, so no coffee for now.");
      }
    });
    let flaky = 0;
    bot.command("flaky", async (ctx) => {
      if (++flaky === 1) throw new Error("the first run fails");
      await ctx.prompt("Which size, second time round?", { timeout: WAIT });
    });
    bot.on("message", { direct: true }, (ctx) => ctx.reply(`heard: ${ctx.event.message.content}`));
  },
});

let clock: TestClock;
let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  clock = new TestClock();
  sandbox = await startSandbox({ clock });
  // Retries as a fresh config has them: a failure would run again after short pauses.
  bot = await runBot(sandbox, { bot: barista, name: "barista", clock, config: "handler_timeout: 5m" });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });

it("an unanswered prompt ends the run: asked once, no retry, no dead letter, one info line", async () => {
  const order = bot.post(MEMBER, dm("order"));
  expect((await bot.nextReply({ after: order })).content).toBe("Which size: small or large?");
  await clock.advance(WAIT + 1);
  await bot.handled(order);
  // Retries would have asked again; move past every pause they could take.
  await clock.advance(10 * 60_000);
  const late = bot.post(MEMBER, dm("large"));
  expect((await bot.nextReply({ after: late })).content).toBe("heard: large");
  expect(bot.replies().map((m) => m.content)).toEqual(["Which size: small or large?", "heard: large"]);
  const mine = bot.logs().filter((l) => l.messageId === order);
  expect(mine.filter((l) => (l.level as number) >= 40)).toEqual([]);
  expect(mine.filter((l) => /prompt/.test(String(l.msg))).map((l) => [l.level, l.msg])).toEqual([
    [30, PROMPT_UNANSWERED],
  ]);
});

it("a caught PromptError lets the handler tell the person", async () => {
  const order = bot.post(MEMBER, dm("polite"));
  expect((await bot.nextReply({ after: order })).content).toBe("Which size: small or large?");
  const asked = bot.replies().at(-1)!.id;
  await clock.advance(WAIT + 1);
  expect((await bot.nextReply({ after: asked })).content).toBe("No answer, so no coffee for now.");
  await bot.handled(order);
});

it("a retry whose prompt goes unanswered ends there too: no further attempt, no dead letter", async () => {
  const order = bot.post(MEMBER, dm("flaky"));
  // The first run failed; the retry (after the first pause) asks.
  await clock.advance(60_000);
  expect((await bot.nextReply({ after: order })).content).toBe("Which size, second time round?");
  await clock.advance(WAIT + 1);
  await bot.handled(order);
  await clock.advance(10 * 60_000);
  expect(bot.replies().map((m) => m.content)).toEqual(["Which size, second time round?"]);
  const mine = bot.logs().filter((l) => l.messageId === order);
  expect(mine.filter((l) => (l.level as number) >= 50).map((l) => l.msg)).toEqual(["handler failed"]);
  expect(mine.filter((l) => l.msg === PROMPT_UNANSWERED)).toHaveLength(1);
});
