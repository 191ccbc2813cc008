/**
 * A handler declared before the commands sees every message first; once `await next()` resolves,
 * `ctx.command` (typed on every message context) names the command the message ran, or is
 * undefined. Against the sandbox over HTTP, through the testing kit.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";

const MEMBER = "member@sandbox.example";

const watcher = defineBot({
  setup(bot) {
    bot.on("message", async (ctx, next) => {
      await next();
      // No cast: `command` is part of the message context's type.
      const ran = ctx.command ? `${ctx.command.name} as ${ctx.command.invokedAs}` : "none";
      await ctx.reply(`seen: ${ran}`);
    });
    bot.command("ping", { aliases: ["p"] }, (ctx) => ctx.reply("pong"));
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  sandbox = await startSandbox();
  bot = await runBot(sandbox, { bot: watcher, name: "watcher" });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

it("names the command a message ran, after next(); none for other messages", async () => {
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  const ran = sandbox.control.sendAs(MEMBER, dm("P"));
  expect((await bot.nextReply({ after: ran.id })).content).toBe("pong");
  expect((await bot.nextReply({ after: ran.id, where: (m) => m.content.startsWith("seen") })).content).toBe(
    "seen: ping as P",
  );
  await bot.handled(ran.id);
  const talk = sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "hello all",
  });
  expect((await bot.nextReply({ after: talk.id })).content).toBe("seen: none");
});
