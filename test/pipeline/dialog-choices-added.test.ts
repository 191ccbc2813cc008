/**
 * A deploy that adds choices at the end of a waiting question's list: the dialogs waiting there go
 * on, each answer taken by the numbers and words it was asked with (and a new choice typed, taken
 * once the code knows it). A choice removed or moved stops them, the person told. Before, any
 * change of the list stopped every dialog waiting at the question: a release team adding
 * "rollback" to its approval prompt lost every pending approval. A real daemon against the
 * sandbox over HTTP, restarted with the new code; presses through the sandbox.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";

/** A bot asking "When?" with `choices`, and a deploy approved by the owner with `buttons`. */
const asking = (choices: string[], buttons: Record<string, string>) =>
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

let approver = 0;
let clock: TestClock;
let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  clock = new TestClock();
  sandbox = await startSandbox({ clock });
  approver = sandbox.control.users().find((u) => u.email === OWNER)!.user_id;
  const first = asking(["Now.", "Later."], { approve: "check", reject: "cross_mark" });
  bot = await runBot(sandbox, { bot: first, name: "asker", clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string): SendAsInput => ({ type: "direct", to: [bot.email], content });
const topic = (content: string): SendAsInput => ({
  type: "stream",
  to: "general",
  topic: "deploys",
  content,
});
const STOPPED = /updated in the middle of our conversation/;

it("choices added at the end: the waiting dialogs go on, by number, by word, and with a new choice", async () => {
  const people = ["a", "b", "c"].map((n) => {
    const email = `${n}@sandbox.example`;
    sandbox.control.createUser({ email, full_name: `Person ${n}`, channels: ["general"] });
    return email;
  });
  for (const email of people)
    expect((await bot.ask(email, dm("when"))).content).toBe("When?\n1. Now.\n2. Later.");
  await bot.restart({
    bot: asking(["Now.", "Later.", "Never."], { approve: "check", reject: "cross_mark" }),
  });
  expect((await bot.ask(people[0]!, dm("2"))).content).toBe("Later. it is.");
  expect((await bot.ask(people[1]!, dm("now"))).content).toBe("Now. it is.");
  expect((await bot.ask(people[2]!, dm("never"))).content).toBe("Never. it is.");
  expect(bot.logs().filter((l) => String(l.msg).includes("no longer matches"))).toEqual([]);
  // Asked after the deploy, the question lists all three.
  expect((await bot.ask(MEMBER, dm("when"))).content).toBe("When?\n1. Now.\n2. Later.\n3. Never.");
});

it("a choice added to an approval waiting with buttons: the press on its button decides it", async () => {
  const request = await bot.ask(MEMBER, topic("@**asker** deploy"));
  expect(request.content).toBe("Deploy api?\n1. :check: approve\n2. :cross_mark: reject");
  await bot.restart({
    bot: asking(["Now.", "Later."], { approve: "check", reject: "cross_mark", rollback: "rewind" }),
  });
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
  expect(bot.logs().filter((l) => String(l.msg).includes("no longer matches"))).toEqual([]);
});

it.each([
  ["moved", ["Now.", "Later."], ["Later.", "Now."]],
  ["renamed", ["Now.", "Later."], ["Now.", "Soon."]],
  ["removed from the end", ["Now.", "Later.", "Never."], ["Now.", "Later."]],
])("a choice %s stops the waiting dialog, its person told", async (_, asked, deployed) => {
  const buttons = { approve: "check", reject: "cross_mark" };
  await bot.restart({ bot: asking(asked, buttons) });
  expect((await bot.ask(MEMBER, dm("when"))).content).toMatch(/^When\?\n1\. /);
  await bot.restart({ bot: asking(deployed, buttons) });
  expect((await bot.ask(MEMBER, dm("1"))).content).toMatch(STOPPED);
  const warn = bot.logs().find((l) => String(l.msg).includes("no longer matches this dialog"));
  expect(warn).toMatchObject({ level: 40, step: 1 });
});
