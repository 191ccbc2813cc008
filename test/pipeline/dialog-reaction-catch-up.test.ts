/**
 * Reactions made while the bot was down, against the sandbox over HTTP in a real daemon: at the
 * next start the waiting questions are read back, and the first reaction that answers one (from
 * a person who may, with a choice's emoji) is taken, its person named as the server names them;
 * other reactions change nothing. A bot that
 * does not track reactions gets them once it asks with emoji choices, even while a new queue is
 * being registered.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";

const vote = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("ship", async (ctx) => {
      const answer = await ctx.prompt("Ship it?", { choices: { yes: "check", no: "cross_mark" } });
      const who = answer.by.id === ctx.sender!.id ? "you" : "someone else";
      await ctx.reply(`${answer.value} (by ${who}: ${answer.by.name})`);
    });
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  const clock = new TestClock();
  sandbox = await startSandbox({ clock });
  bot = await runBot(sandbox, { bot: vote, name: "vote", clock });
});
afterEach(async () => {
  sandbox.control.delay(0);
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string): SendAsInput => ({ type: "direct", to: [bot.email], content });
const inTopic = (content: string, topic: string): SendAsInput => ({
  type: "stream",
  to: "general",
  topic,
  content,
});

/** The owner moves message `id`'s topic (and all of it) to `topic`, as a moderator does. */
async function moveTopic(id: number, topic: string) {
  const owner = "owner@sandbox.example";
  const auth = Buffer.from(`${owner}:${sandbox.control.apiKeyOf(owner)}`).toString("base64");
  const moved = await fetch(`${sandbox.url}/api/v1/messages/${id}`, {
    method: "PATCH",
    headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ topic, propagate_mode: "change_all" }),
  });
  expect(moved.status).toBe(200);
}

it("a reaction made while the bot was down answers at its next start; one with another emoji does not", async () => {
  const question = await bot.ask(MEMBER, dm("ship"));
  await expect.poll(() => bot.dialogs()).toMatchObject([{ step: 1 }]);
  await bot.stop();
  // A reaction that is no choice first, then the answer.
  await bot.react(question, "smile", { as: MEMBER });
  await bot.react(question, "cross_mark", { as: MEMBER });
  await bot.start();
  const done = await bot.nextReply({ after: question.id });
  // Caught up, the reaction names nobody: the person is named as the server names them.
  expect(done.content).toBe("no (by you: Mel Member)");
  expect(bot.logs().some((l) => l.msg === "caught up reactions that answer waiting questions")).toBe(true);
  await expect.poll(() => bot.dialogs()).toEqual([]);
});

it("a reaction and a typed answer both made while the bot was down: the typed answer wins, though the reaction came first", async () => {
  const question = await bot.ask(MEMBER, dm("ship"));
  await bot.stop();
  // The server keeps no time for a reaction: the order between the two is lost with the events.
  await bot.react(question, "check", { as: MEMBER });
  await bot.post(MEMBER, dm("no"));
  await bot.start();
  expect((await bot.nextReply({ after: question.id })).content).toBe("no (by you: Mel Member)");
  await expect.poll(() => bot.dialogs()).toEqual([]);
});

it("in a channel topic too: the typed answer made while the bot was down wins over a reaction made then", async () => {
  const question = await bot.ask(MEMBER, inTopic("@**vote** ship", "releases"));
  await bot.stop();
  await bot.react(question, "check", { as: MEMBER });
  await bot.post(MEMBER, inTopic("no", "releases"));
  await bot.start();
  expect((await bot.nextReply({ after: question.id })).content).toBe("no (by you: Mel Member)");
  await expect.poll(() => bot.dialogs()).toEqual([]);
});

it("a refused answer asks again with the buttons on that message: a reaction there answers, live or caught up", async () => {
  await bot.ask(MEMBER, dm("ship"));
  const again = await bot.ask(MEMBER, dm("maybe"));
  expect(again.content).toMatch(/^I could not use that/);
  const buttons = () => (sandbox.control.messageView(again.id)!.reactions as { emoji_name: string }[]).length;
  await expect.poll(buttons).toBe(2);
  await bot.react(again, "check", { as: MEMBER });
  expect((await bot.nextReply({ after: again.id })).content).toBe("yes (by you: Mel Member)");

  await bot.ask(MEMBER, dm("ship"));
  const twice = await bot.ask(MEMBER, dm("perhaps"));
  await expect.poll(() => (sandbox.control.messageView(twice.id)!.reactions as unknown[]).length).toBe(2);
  await bot.stop();
  await bot.react(twice, "cross_mark", { as: MEMBER });
  await bot.start();
  expect((await bot.nextReply({ after: twice.id })).content).toBe("no (by you: Mel Member)");
});

it("with no answering reaction made meanwhile, the question keeps waiting after the start", async () => {
  const question = await bot.ask(MEMBER, dm("ship"));
  await bot.stop();
  await bot.react(question, "smile", { as: MEMBER });
  await bot.start();
  await expect.poll(() => bot.dialogs()).toMatchObject([{ step: 1 }]);
  await bot.react(question, "check", { as: MEMBER });
  expect((await bot.nextReply({ after: question.id })).content).toBe("yes (by you: Mel Member)");
});

it("a press made and taken off while the bot was down is never seen: the question keeps waiting", async () => {
  const question = await bot.ask(MEMBER, dm("ship"));
  await bot.stop();
  await bot.react(question, "cross_mark", { as: MEMBER });
  await bot.react(question, "cross_mark", { as: MEMBER, remove: true });
  await bot.start();
  await expect.poll(() => bot.logs().some((l) => l.msg === "caught up after a new queue")).toBe(true);
  expect(bot.dialogs()).toMatchObject([{ step: 1 }]);
  await bot.react(question, "check", { as: MEMBER });
  expect((await bot.nextReply({ after: question.id })).content).toBe("yes (by you: Mel Member)");
});

it("a bot that does not track reactions gets them once it asks with emoji choices: its queue is renewed", async () => {
  await bot.stop({ wipe: true });
  const untracked = defineBot({
    setup(b) {
      b.command("ship", async (ctx) => {
        const answer = await ctx.prompt("Ship it?", { choices: { yes: "check", no: "cross_mark" } });
        await ctx.reply(answer.value);
      });
      b.command("ping", (ctx) => ctx.reply("pong"));
    },
  });
  bot = await runBot(sandbox, { bot: untracked, name: "untracked" });
  const question = await bot.ask(MEMBER, dm("ship"));
  await expect
    .poll(() => bot.logs().find((l) => l.msg === "event queue registered" && l.reason === "event_types"))
    .toBeDefined();
  await bot.react(question, "check", { as: MEMBER });
  expect((await bot.nextReply({ after: question.id })).content).toBe("yes");
  // Messages go on as before through the new queue.
  expect((await bot.ask(MEMBER, dm("ping"))).content).toBe("pong");
});

it("a question with emoji choices first asked while a new queue is being registered renews that queue in turn", async () => {
  await bot.stop({ wipe: true });
  let entered = false;
  let open = () => {};
  const gate = new Promise<number>((resolve) => {
    open = () => resolve(1);
  });
  const untracked = defineBot({
    setup(b) {
      b.command("ship", async (ctx) => {
        entered = true;
        // Held until the queue's registration is under way.
        await ctx.external("gate", () => gate);
        const answer = await ctx.prompt("Ship it?", { choices: { yes: "check", no: "cross_mark" } });
        await ctx.reply(answer.value);
      });
    },
  });
  bot = await runBot(sandbox, { bot: untracked, name: "untracked" });
  const asked = bot.post(MEMBER, dm("ship"));
  await expect.poll(() => entered).toBe(true);
  // The queue is lost and its successor's registration held at the server.
  sandbox.control.delay(600_000, { paths: ["/register"] });
  sandbox.control.expireQueue({ email: bot.email });
  await expect
    .poll(() => bot.logs().some((l) => l.msg === "event queue expired on the server; registering a new one"))
    .toBe(true);
  await expect.poll(() => sandbox.control.delayed()).toBe(1);
  open();
  const question = await bot.nextReply({ after: asked });
  await expect
    .poll(() => bot.logs().some((l) => l.msg === "renewing the event queue to receive more event types"))
    .toBe(true);
  sandbox.control.delay(0);
  await expect
    .poll(() => bot.logs().find((l) => l.msg === "event queue registered" && l.reason === "event_types"))
    .toBeDefined();
  await bot.react(question, "check", { as: MEMBER });
  expect((await bot.nextReply({ after: question.id })).content).toBe("yes");
});

it("a question with emoji choices in a topic moved while the bot was down: read back once, for its move and its reactions", async () => {
  const question = await bot.ask(MEMBER, inTopic("@**vote** ship", "releases"));
  await bot.stop();
  await moveTopic(question.id, "✔ releases");
  const before = sandbox.control.requests.length;
  await bot.start();
  await expect.poll(() => bot.dialogs()).toMatchObject([{ where: "#general > ✔ releases" }]);
  await bot.react(question, "check", { as: MEMBER });
  expect((await bot.nextReply({ after: question.id })).content).toBe("yes (by you: Mel Member)");
  const reads = sandbox.control.requests
    .slice(before)
    .filter((r) => r.email === bot.email && r.method === "GET" && r.path === "/messages");
  // The catch-up's read, and one read of the waiting question for both its reactions and its place.
  expect(reads).toHaveLength(2);
});

it("a reaction made while the bot was down on a question moved meanwhile: the reply goes where the question is now", async () => {
  const question = await bot.ask(MEMBER, inTopic("@**vote** ship", "releases"));
  await bot.stop();
  await moveTopic(question.id, "✔ releases");
  await bot.react(question, "check", { as: MEMBER });
  await bot.start();
  const done = await bot.nextReply({ after: question.id });
  expect(done.content).toBe("yes (by you: Mel Member)");
  expect(done.subject).toBe("✔ releases");
});

it("a reaction made while the bot was down by someone it never met is named as the server names them", async () => {
  await bot.stop({ wipe: true });
  const owner = sandbox.control.users().find((u) => u.email === "owner@sandbox.example")!;
  const approve = defineBot({
    setup(b) {
      b.track("reactions");
      b.command("ask", async (ctx) => {
        const where = { channel: "general", topic: "approvals" };
        const answer = await ctx.prompt("OK?", {
          choices: { yes: "check", no: "cross_mark" },
          from: owner.user_id,
          where,
        });
        await ctx.reply(`${answer.value} by ${answer.by.name}`);
      });
    },
  });
  bot = await runBot(sandbox, { bot: approve, name: "approve" });
  bot.post(MEMBER, dm("ask"));
  await expect.poll(() => bot.dialogs()).toMatchObject([{ where: "#general > approvals" }]);
  const question = bot.replies().find((m) => m.content.startsWith("OK?"))!;
  await bot.stop();
  await bot.react(question, "check", { as: owner.email });
  await bot.start();
  await expect.poll(() => bot.replies().at(-1)?.content).toBe(`yes by ${owner.full_name}`);
});
