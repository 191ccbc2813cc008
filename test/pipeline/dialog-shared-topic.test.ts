/**
 * Dialogs in a channel topic other bots and people share, against the sandbox over HTTP with two
 * bots in their own daemons: a message that begins by naming someone else (another bot's command,
 * a word to a colleague) is said to them, not an answer; one that names others later, names the
 * bot, or begins with a wildcard mention is.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";

const MEMBER = "member@sandbox.example";

const standup = defineBot({
  setup(bot) {
    bot.command("standup", async (ctx) => {
      const a = await ctx.prompt("What did you do yesterday?");
      await ctx.reply(`standup noted: ${a.text}`);
    });
  },
});

const deploys = defineBot({
  setup(bot) {
    bot.command("deploy", async (ctx) => {
      const a = await ctx.prompt("Which version?");
      await ctx.reply(`deploying: ${a.text}`);
    });
  },
});

let sandbox: Sandbox;
let alpha: TestBot;
let beta: TestBot;
beforeEach(async () => {
  sandbox = await startSandbox();
  alpha = await runBot(sandbox, { bot: standup, name: "alpha" });
  beta = await runBot(sandbox, { bot: deploys, name: "beta" });
});
afterEach(async () => {
  await alpha.stop();
  await beta.stop();
  await sandbox.stop();
});

const say = (content: string): SendAsInput => ({ type: "stream", to: "general", topic: "team", content });

it("two bots ask the same person in one topic: each takes the answer said to it", async () => {
  expect((await alpha.ask(MEMBER, say("@**alpha** standup"))).content).toBe("What did you do yesterday?");
  // Said to beta while alpha's question waits: beta's command, not alpha's answer.
  expect((await beta.ask(MEMBER, say("@**beta** deploy"))).content).toBe("Which version?");
  expect((await beta.ask(MEMBER, say("@**beta** 1.4.2"))).content).toBe("deploying: 1.4.2");
  expect((await alpha.ask(MEMBER, say("@**alpha** fixed the search"))).content).toBe(
    "standup noted: fixed the search",
  );
});

it("a message naming others later in its text, or beginning with a wildcard mention, is the answer", async () => {
  await alpha.ask(MEMBER, say("@**alpha** standup"));
  expect((await alpha.ask(MEMBER, say("paired with @**Olive Owner** on the search"))).content).toBe(
    "standup noted: paired with @**Olive Owner** on the search",
  );
  await alpha.ask(MEMBER, say("@**alpha** standup"));
  expect((await alpha.ask(MEMBER, say("@**topic** the release is out"))).content).toBe(
    "standup noted: @**topic** the release is out",
  );
});

it("a word to a colleague while the question waits is theirs; the answer after it is taken", async () => {
  await alpha.ask(MEMBER, say("@**alpha** standup"));
  alpha.post(MEMBER, say("@**Olive Owner** can you look at the build?"));
  // Had the aside been taken, this would be "standup noted: @**Olive Owner** can you look …".
  expect((await alpha.ask(MEMBER, say("reviews"))).content).toBe("standup noted: reviews");
});
