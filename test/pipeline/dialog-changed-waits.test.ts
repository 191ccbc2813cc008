/**
 * A dialog whose code changed under it is found so when it next runs, not at the reload: with no
 * answer, it waits as it was until its deadline, and then the person is told (not "Expired.").
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/index.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";

const deployBot = (choices: Record<string, string>) =>
  defineBot({
    setup(bot) {
      bot.track("reactions");
      bot.command("ship", async (ctx) => {
        try {
          const answer = await ctx.prompt("Ship it?", { id: "decision", choices, timeout: "1h" });
          await ctx.reply(`${answer.value}.`);
        } catch (err) {
          if (!(err instanceof PromptError && err.code === "PROMPT_TIMEOUT")) throw err;
          await ctx.reply("Expired.");
        }
      });
    },
  });

let clock: TestClock;
let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  clock = new TestClock();
  sandbox = await startSandbox({ clock });
  bot = await runBot(sandbox, { bot: deployBot({ yes: "check", no: "cross_mark" }), name: "ship", clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string): SendAsInput => ({ type: "direct", to: [bot.email], content });

it("a changed question waits as it was until its deadline, then the person is told", async () => {
  const question = await bot.ask(MEMBER, dm("ship"));
  await bot.restart({ bot: deployBot({ yes: "check", no: "x" }) });
  expect(bot.dialogs()).toMatchObject([{ step: 1 }]);
  await clock.advance(3_600_000 + 1_000);
  const told = await bot.nextReply({ after: question.id });
  expect(told.content).toMatch(/updated in the middle of our conversation/);
  expect(bot.replies().map((m) => m.content)).not.toContain("Expired.");
  await expect.poll(() => bot.dialogs()).toEqual([]);
});
