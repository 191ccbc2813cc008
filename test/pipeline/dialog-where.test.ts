/**
 * A question asked in another conversation (`where`), against the sandbox over HTTP in a real
 * daemon: the question goes to that channel topic (or direct message), its answer is taken
 * there from whoever may answer, what the prompt says on its own is said there, the outcome in
 * the dialog's own conversation; through a crash nothing is said twice.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { PromptError } from "../../src/index.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";
const BOT = "deploy-bot@sandbox.example";

const deploy = defineBot({
  setup(bot) {
    bot.command("deploy", async (ctx) => {
      const owner = (await ctx.users.get(OWNER))!.user_id;
      const answer = await ctx.prompt(`${ctx.sender!.name} asks to deploy. Approve?`, {
        where: { channel: "releases", topic: "approvals" },
        from: owner,
        // A schema, not choices: an answer that fails it is refused (with choices it would be talk).
        schema: z.enum(["yes", "no"]),
      });
      await ctx.reply(`${answer.value === "yes" ? "Approved" : "Rejected"} by ${answer.by.name}.`);
    });
    bot.command("launch", async (ctx) => {
      // #launches is a channel the bot is not subscribed to.
      const owner = (await ctx.users.get(OWNER))!.user_id;
      const go = await ctx.prompt("Launch?", { where: { channel: "launches", topic: "go" }, from: owner });
      await ctx.reply(`${go.text}, said ${go.by.name}.`);
    });
    bot.command("confirm", async (ctx) => {
      // Asked of the person, in a direct message, though they wrote in a channel.
      const sure = await ctx.prompt("Sure?", { where: { direct: [ctx.sender!.id] } });
      await ctx.reply(`You said ${sure.text}.`);
    });
    bot.command("nowhere", async (ctx) => {
      try {
        await ctx.prompt("?", { where: { channel: "releases" } as never });
      } catch (err) {
        await ctx.reply((err as PromptError).message);
      }
    });
    bot.command("others", async (ctx) => {
      try {
        // The owner is asked in a direct message, but nobody said the owner may answer.
        await ctx.prompt("?", { where: { direct: [(await ctx.users.get(OWNER))!.user_id] } });
      } catch (err) {
        await ctx.reply((err as PromptError).message);
      }
    });
    bot.command("alone", async (ctx) => {
      try {
        await ctx.prompt("?", { where: { direct: [ctx.bot.userId] } });
      } catch (err) {
        await ctx.reply((err as PromptError).message);
      }
    });
    bot.command("lost", async (ctx) => {
      try {
        await ctx.prompt("?", { where: { channel: "no-such-channel", topic: "t" } });
      } catch (err) {
        await ctx.reply(`${(err as PromptError).code}: ${(err as PromptError).message}`);
      }
    });
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  const clock = new TestClock();
  sandbox = await startSandbox({
    clock,
    org: {
      realm: { name: "Sandbox", host: "sandbox.example" },
      users: [
        { email: OWNER, full_name: "Olive Owner", role: "owner" },
        { email: MEMBER, full_name: "Mel Member" },
      ],
      bots: [{ email: BOT, full_name: "deploy", type: "generic", owner: OWNER }],
      channels: [
        { name: "ops", subscribers: [OWNER, MEMBER, BOT] },
        { name: "releases", subscribers: [OWNER, MEMBER, BOT] },
        { name: "launches", subscribers: [OWNER, MEMBER] },
      ],
    },
  });
  bot = await runBot(sandbox, { bot: deploy, name: "deploy", email: BOT, clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const at = (to: string, topic: string, content: string): SendAsInput => ({
  type: "stream",
  to,
  topic,
  content,
});
const inTopic = (channel: string, topic: string) =>
  bot
    .replies()
    .filter((m) => m.display_recipient === channel && m.subject === topic)
    .map((m) => m.content);

it("asks in another topic, takes the answer there from the one allowed, and answers where it began", async () => {
  const request = await bot.nextReply({ after: bot.post(MEMBER, at("ops", "api", "@**deploy** deploy")) });
  expect(request.display_recipient).toBe("releases");
  expect(request.subject).toBe("approvals");
  await expect
    .poll(() => bot.dialogs())
    .toMatchObject([{ where: "#releases > approvals", awaiting: expect.stringMatching(/^user \d+$/) }]);
  // The requester there, and the allowed person in the dialog's own topic: ordinary messages.
  bot.post(MEMBER, at("releases", "approvals", "yes"));
  bot.post(OWNER, at("ops", "api", "yes"));
  // A refused answer is asked again where the question is.
  const again = await bot.ask(OWNER, at("releases", "approvals", "maybe"));
  expect(again.subject).toBe("approvals");
  expect(again.content).toMatch(/^I could not use that/);
  await bot.restart({ crash: true });
  const done = await bot.nextReply({ after: bot.post(OWNER, at("releases", "approvals", "yes")) });
  expect(done.display_recipient).toBe("ops");
  expect(done.content).toBe("Approved by Olive Owner.");
  expect(inTopic("releases", "approvals")).toEqual([request.content, again.content]);
  expect(inTopic("ops", "api")).toEqual([done.content]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
});

it("asks in a channel the bot is not subscribed to: it subscribes itself, and the answer typed there reaches it", async () => {
  const question = await bot.nextReply({ after: bot.post(MEMBER, at("ops", "api", "@**deploy** launch")) });
  expect([question.display_recipient, question.subject, question.content]).toEqual([
    "launches",
    "go",
    "Launch?",
  ]);
  const done = await bot.nextReply({ after: bot.post(OWNER, at("launches", "go", "go ahead")) });
  expect([done.display_recipient, done.content]).toEqual(["ops", "go ahead, said Olive Owner."]);
});

it("asks the person in a direct message; their messages in the channel stay ordinary", async () => {
  const sure = await bot.nextReply({ after: bot.post(MEMBER, at("ops", "api", "@**deploy** confirm")) });
  expect(sure.type).toBe("private");
  await expect.poll(() => bot.dialogs()).toMatchObject([{ where: "direct message" }]);
  const done = await bot.nextReply({
    after: bot.post(MEMBER, { type: "direct", to: [BOT], content: "yes" }),
  });
  expect(done.display_recipient).toBe("ops");
  expect(done.content).toBe("You said yes.");
});

it("a where without a topic is refused, naming the option", async () => {
  expect((await bot.ask(MEMBER, at("ops", "api", "@**deploy** nowhere"))).content).toBe(
    "ctx.prompt(): `where` must be { channel, topic } or { direct: [user ids] }: topic needs a string.",
  );
});

it("a direct message without the person asked, and no from, is refused naming the option", async () => {
  const member = sandbox.control.users().find((u) => u.email === MEMBER)!.user_id;
  expect((await bot.ask(MEMBER, at("ops", "api", "@**deploy** others"))).content).toBe(
    `ctx.prompt(): \`where\` is a direct message without the person asked (user ${member}): add them, or say who answers with \`from\`.`,
  );
  await expect.poll(() => bot.dialogs()).toEqual([]);
});

it("a direct message with the bot alone is refused, naming the option", async () => {
  expect((await bot.ask(MEMBER, at("ops", "api", "@**deploy** alone"))).content).toBe(
    "ctx.prompt(): `where` must be { channel, topic } or { direct: [user ids] }: direct needs someone besides the bot.",
  );
});

it("a channel the server does not have is refused, naming the option and the channel", async () => {
  expect((await bot.ask(MEMBER, at("ops", "api", "@**deploy** lost"))).content).toBe(
    "PROMPT_OPTIONS: ctx.prompt(): `where` names the channel \"no-such-channel\", which the server refused: Invalid channel name 'no-such-channel' (400 BAD_REQUEST).",
  );
  await expect.poll(() => bot.dialogs()).toEqual([]);
});
