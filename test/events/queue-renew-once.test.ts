/**
 * A bot whose queue lacks the event types a dialog needs (a question asked in a channel needs
 * deletions and topic moves) renews its queue once for all of them: one log line naming the
 * types, one registration. Against the sandbox over HTTP, through the testing kit.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";

const MEMBER = "member@sandbox.example";
const RENEWING = "renewing the event queue to receive more event types";

const asking = defineBot({
  setup(bot) {
    bot.command("size", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await ctx.reply(`size ${size.text}`);
    });
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  sandbox = await startSandbox();
  bot = await runBot(sandbox, { bot: asking, name: "asking" });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

it("a question in a channel renews the queue once, for every type it lacks", async () => {
  const registered = () => sandbox.control.requests.filter((r) => r.path === "/register").length;
  const before = registered();
  const sent = sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "@**asking** size",
  });
  const question = await bot.nextReply({ after: sent.id });
  expect(question.content).toBe("Which size?");
  await expect.poll(registered).toBe(before + 1);
  const lines = bot.logs().filter((l) => l.msg === RENEWING);
  expect(lines.map((l) => l.types)).toEqual([["delete_message", "update_message"]]);
  // The dialog goes on on the renewed queue.
  const answer = sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "L" });
  expect((await bot.nextReply({ after: answer.id })).content).toBe("size L");
  expect(registered()).toBe(before + 1);
});
