/**
 * A deploy that adds choices at the end of a waiting question's list: the dialogs waiting there go
 * on, each answer taken by the numbers and words it was asked with (and a new choice typed, taken
 * once the code knows it). A choice removed or moved stops them, the person told. Before, any
 * change of the list stopped every dialog waiting at the question: a release team adding
 * "rollback" to its approval prompt lost every pending approval. The kit's bot (a real daemon)
 * against the sandbox over HTTP, restarted with the new code; presses through the sandbox.
 */
import { defineBot } from "../../src/bot/define-bot.ts";
import { createBotTest, expect } from "../../src/testing/vitest.ts";
import type { SendAsInput, TestBot } from "../../src/testing.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const PEOPLE = ["a@sandbox.example", "b@sandbox.example", "c@sandbox.example"];
const BUTTONS = { approve: "check", reject: "cross_mark" };
const STOPPED = /updated in the middle of our conversation/;

const test = createBotTest({ users: PEOPLE.map((email) => ({ email })) });

/** A bot asking "When?" with `choices`, and a deploy approved by `approver` with `buttons`. */
const asking = (choices: string[], buttons: Record<string, string>, approver = 0) =>
  defineBot({
    setup(bot) {
      bot.track("reactions");
      bot.command("when", async (ctx) => {
        const when = await ctx.prompt("When?", { choices });
        await ctx.reply(`${when.value} it is.`);
      });
      bot.command("deploy", async (ctx) => {
        const decision = await ctx.prompt("Deploy api?", { from: approver, choices: buttons });
        await ctx.reply(`api: ${decision.value} by ${decision.by.name}.`);
      });
    },
  });

const dm = (bot: TestBot, content: string): SendAsInput => ({ type: "direct", to: [bot.email], content });
const topic = (content: string): SendAsInput => ({
  type: "stream",
  to: "general",
  topic: "deploys",
  content,
});
const stopLines = (bot: TestBot) => bot.logs().filter((l) => String(l.msg).includes("no longer matches"));

test("choices added at the end: the waiting dialogs go on, by number, by word, and with a new choice", async ({
  runBot,
}) => {
  const bot = await runBot({ bot: asking(["Now.", "Later."], BUTTONS), name: "asker" });
  for (const email of PEOPLE)
    expect((await bot.ask(email, dm(bot, "when"))).content).toBe("When?\n1. Now.\n2. Later.");
  await bot.restart({ bot: asking(["Now.", "Later.", "Never."], BUTTONS) });
  expect((await bot.ask(PEOPLE[0]!, dm(bot, "2"))).content).toBe("Later. it is.");
  expect((await bot.ask(PEOPLE[1]!, dm(bot, "now"))).content).toBe("Now. it is.");
  expect((await bot.ask(PEOPLE[2]!, dm(bot, "never"))).content).toBe("Never. it is.");
  expect(stopLines(bot)).toEqual([]);
  // Asked after the deploy, the question lists all three.
  expect((await bot.ask(MEMBER, dm(bot, "when"))).content).toBe("When?\n1. Now.\n2. Later.\n3. Never.");
});

test("a choice added to an approval waiting with buttons: the press on its button decides it", async ({
  runBot,
  sandbox,
}) => {
  const approver = sandbox.control.users().find((u) => u.email === OWNER)!.user_id;
  const bot = await runBot({ bot: asking([], BUTTONS, approver), name: "asker" });
  const request = await bot.ask(MEMBER, topic("@**asker** deploy"));
  expect(request.content).toBe("Deploy api?\n1. :check: approve\n2. :cross_mark: reject");
  await bot.restart({ bot: asking([], { ...BUTTONS, rollback: "rewind" }, approver) });
  // A choice the waiting question does not list is talk there, not its answer.
  await bot.handled(await bot.post(OWNER, topic("rollback")));
  await bot.react(request, "check", { as: OWNER });
  await bot.handled(request.id);
  expect(
    bot
      .replies()
      .map((m) => m.content)
      .at(-1),
  ).toBe("api: approve by Olive Owner.");
  expect(stopLines(bot)).toEqual([]);
});

test.for([
  ["moved", ["Now.", "Later."], ["Later.", "Now."]],
  ["renamed", ["Now.", "Later."], ["Now.", "Soon."]],
  ["removed from the end", ["Now.", "Later.", "Never."], ["Now.", "Later."]],
] as const)(
  "a choice %s stops the waiting dialog, its person told",
  async ([, asked, deployed], { runBot }) => {
    const bot = await runBot({ bot: asking([...asked], BUTTONS), name: "asker" });
    expect((await bot.ask(MEMBER, dm(bot, "when"))).content).toMatch(/^When\?\n1\. /);
    await bot.restart({ bot: asking([...deployed], BUTTONS) });
    expect((await bot.ask(MEMBER, dm(bot, "1"))).content).toMatch(STOPPED);
    expect(stopLines(bot).find((l) => String(l.msg).includes("this dialog"))).toMatchObject({
      level: 40,
      step: 1,
    });
  },
);
