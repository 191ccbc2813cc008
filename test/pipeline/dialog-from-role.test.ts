/**
 * A question for a role (`from: { role }`), against the sandbox over HTTP in a real daemon that
 * tracks users: a member's message in the topic is ordinary, a moderator's is the answer, and a
 * person promoted while the question waits may answer (the users cache follows role changes); the
 * bot's own emoji buttons never answer a question for a role it has.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";
const MOD = "mod@sandbox.example";
const LATER = "later@sandbox.example";

const reports = defineBot({
  setup(bot) {
    bot.track("users");
    bot.track("reactions");
    bot.command("report", async (ctx) => {
      const verdict = await ctx.prompt("A moderator decides: keep or remove?", {
        from: { role: "moderator" },
        choices: ["keep", "remove"],
      });
      await ctx.reply(`${verdict.value}, decided by ${verdict.by.name}.`);
    });
    bot.command("ping", (ctx) => ctx.reply("pong"));
    bot.command("poll", async (ctx) => {
      const vote = await ctx.prompt("Members decide:", {
        from: { role: "member" },
        choices: { keep: "check", drop: "cross_mark" },
      });
      await ctx.reply(`${vote.value}, decided by ${vote.by.id === ctx.bot.userId ? "the bot" : "a person"}.`);
    });
    bot.command("name", async (ctx) => ctx.reply(`Hello ${(await ctx.prompt("Name?")).text}.`));
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  const clock = new TestClock();
  sandbox = await startSandbox({ clock });
  sandbox.control.createUser({
    email: MOD,
    full_name: "Mo Derator",
    role: "moderator",
    channels: ["general"],
  });
  sandbox.control.createUser({ email: LATER, full_name: "Lee Later", channels: ["general"] });
  bot = await runBot(sandbox, { bot: reports, name: "reports", clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const topic = (content: string): SendAsInput => ({
  type: "stream",
  to: "general",
  topic: "reports",
  content,
});

it("a member's message is ordinary; a moderator's answers, and who answered is said", async () => {
  await bot.ask(MEMBER, topic("@**reports** report"));
  expect((await bot.ask(MEMBER, topic("@**reports** ping"))).content).toBe("pong");
  expect(bot.dialogs()).toMatchObject([{ awaiting: "a moderator or above" }]);
  expect((await bot.ask(MOD, topic("2"))).content).toBe("remove, decided by Mo Derator.");
});

it("someone made a moderator while the question waits may answer", async () => {
  await bot.ask(MEMBER, topic("@**reports** report"));
  sandbox.control.updateUser(LATER, { role: "moderator" });
  // Each try is a message of its own: those sent before the bot saw the change are ordinary.
  await expect
    .poll(
      async () => (await bot.ask(LATER, topic("keep"), { timeoutMs: 2_000 }).catch(() => undefined))?.content,
    )
    .toBe("keep, decided by Lee Later.");
});

it("the requester's own dialog in the same topic leaves the question for moderators answerable", async () => {
  await bot.ask(MEMBER, topic("@**reports** report"));
  // A dialog of the member's own, begun while the question for moderators waits there.
  expect((await bot.ask(MEMBER, topic("@**reports** name"))).content).toBe("Name?");
  expect((await bot.ask(MOD, topic("keep"))).content).toBe("keep, decided by Mo Derator.");
  expect((await bot.ask(MEMBER, topic("Mel"))).content).toBe("Hello Mel.");
});

it("the bot's own emoji buttons are no answer to a question for a role it has, live or caught up", async () => {
  const live = await bot.ask(MEMBER, topic("@**reports** poll"));
  await bot.react(live, "cross_mark", { as: MOD });
  expect((await bot.nextReply({ after: live.id })).content).toBe("drop, decided by a person.");

  const later = await bot.ask(MEMBER, topic("@**reports** poll"));
  await expect.poll(() => bot.dialogs()).toMatchObject([{ deadline: expect.any(String) }]);
  await bot.stop();
  await bot.react(later, "cross_mark", { as: MOD });
  await bot.start();
  expect((await bot.nextReply({ after: later.id })).content).toBe("drop, decided by a person.");
});

it("a question for a role in a bot that does not track users: the first unknown person checked says how to fix it", async () => {
  await bot.stop({ wipe: true });
  const untracked = defineBot({
    setup(b) {
      b.command("report", async (ctx) => {
        const verdict = await ctx.prompt("A moderator decides:", { from: { role: "moderator" } });
        await ctx.reply(`decided by ${verdict.by.name}.`);
      });
    },
  });
  bot = await runBot(sandbox, { bot: untracked, name: "reports" });
  await bot.ask(MEMBER, topic("@**reports** report"));
  bot.post(MOD, topic("remove"));
  await expect
    .poll(() => bot.logs().find((l) => String(l.msg).includes('call bot.track("users") in setup')))
    .toMatchObject({ level: 40 });
  expect(bot.dialogs()).toHaveLength(1);
});
