/**
 * A waiting question deleted, against the sandbox over HTTP in a real daemon: the prompt rejects
 * with `PROMPT_DELETED` once (what the handler's catch says is said once); uncaught, the dialog
 * ends with an info line and no dead letter; the person's next message there is an ordinary one;
 * deleting an earlier question or an answer changes nothing; the bot's own `delete_message`
 * handler still gets the event.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/index.ts";
import { PROMPT_DELETED } from "../../src/pipeline/dialogs/prompt-error.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { deleteMessageAs } from "../support/delete-message.ts";
import { renewed, surveyCommand } from "../support/two-questions.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";

/** The ids of the messages the bot's own `delete_message` handler was told of, while it has one. */
const deletions: number[] = [];
let watching = false;

const survey = defineBot({
  setup(bot) {
    surveyCommand(bot);
    bot.command("size", async (ctx) => {
      try {
        await ctx.reply(`size: ${(await ctx.prompt("Which size?")).text}`);
      } catch (err) {
        if (!(err instanceof PromptError)) throw err;
        await ctx.reply(`ended: ${err.code}`);
      }
    });
    bot.on("message", (ctx) => ctx.reply(`ordinary: ${ctx.text}`));
    if (!watching) return;
    bot.on("delete_message", (ctx) => {
      const event = ctx.event as { message_ids?: number[]; message_id?: number };
      deletions.push(...(event.message_ids ?? [event.message_id ?? 0]));
    });
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  deletions.length = 0;
  watching = false;
  const clock = new TestClock();
  sandbox = await startSandbox({ clock });
  bot = await runBot(sandbox, { bot: survey, name: "survey", clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string): SendAsInput => ({ type: "direct", to: [bot.email], content });
const inTopic = (content: string): SendAsInput => ({
  type: "stream",
  to: "general",
  topic: "standup",
  content: `@**survey** ${content}`,
});

/** Deletes message `id` as the organization's owner, through the server's own route. */
const deleteAsOwner = (id: number) => deleteMessageAs(sandbox, OWNER, id);

/** The bot's messages, oldest first. */
function botSaid(): string[] {
  return sandbox.control
    .messages()
    .filter((m) => m.sender_id === bot.userId)
    .map((m) => String(m.content));
}

// The owner (an admin) asks in a direct message: they may delete the bot's messages they can see.
it("the waiting question deleted: the handler's catch gets PROMPT_DELETED once, and the next message is ordinary", async () => {
  const question = await bot.ask(OWNER, dm("size"));
  expect(question.content).toBe("Which size?");
  await renewed(bot);
  await deleteAsOwner(question.id);
  await expect.poll(() => botSaid()).toEqual(["ended: PROMPT_DELETED"]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
  // Not an answer under a question that is gone: an ordinary message.
  expect((await bot.ask(OWNER, dm("large"))).content).toBe("ordinary: large");
  expect(botSaid()).toEqual(["ended: PROMPT_DELETED", "ordinary: large"]);
});

it("uncaught, the dialog ends with an info line and no dead letter; the next message in the topic is ordinary", async () => {
  const origin = bot.post(MEMBER, inTopic("survey"));
  await bot.nextReply({ after: origin });
  expect((await bot.ask(MEMBER, inTopic("one"))).content).toBe("noted one");
  await expect.poll(() => botSaid()).toEqual(["Q1?", "noted one", "Q2?"]);
  await renewed(bot);
  const q2 = sandbox.control.messages().find((m) => m.content === "Q2?")!.id as number;
  await deleteAsOwner(q2);
  await expect
    .poll(() => bot.logs().find((l) => l.msg === PROMPT_DELETED))
    .toMatchObject({ level: 30, prompt: "the question was deleted." });
  await expect.poll(() => bot.dialogs()).toEqual([]);
  await bot.handled(origin);
  expect(bot.logs().filter((l) => (l.level as number) >= 40)).toEqual([]);
  expect((await bot.ask(MEMBER, inTopic("two"))).content).toBe("ordinary: two");
  expect(botSaid()).toEqual(["Q1?", "noted one", "ordinary: two"]);
});

it("deleting an earlier question or an answer changes nothing: the waiting question is answered", async () => {
  watching = true;
  await bot.restart();
  const q1 = await bot.ask(MEMBER, inTopic("survey"));
  const answer = bot.post(MEMBER, inTopic("one"));
  await expect.poll(() => botSaid()).toEqual(["Q1?", "noted one", "Q2?"]);
  await renewed(bot);
  await deleteAsOwner(q1.id);
  await deleteAsOwner(answer);
  await expect.poll(() => deletions).toEqual([q1.id, answer]);
  expect((await bot.ask(MEMBER, inTopic("two"))).content).toBe("done: one / two");
  expect(bot.logs().some((l) => l.msg === PROMPT_DELETED)).toBe(false);
});

it("an answered question deleted: the dialog goes on; the bot's own handler of deletions gets the event", async () => {
  watching = true;
  await bot.restart();
  const question = await bot.ask(OWNER, dm("size"));
  expect((await bot.ask(OWNER, dm("large"))).content).toBe("size: large");
  await deleteAsOwner(question.id);
  await expect.poll(() => deletions).toEqual([question.id]);
  expect((await bot.ask(OWNER, dm("again"))).content).toBe("ordinary: again");
  expect(botSaid()).toEqual(["size: large", "ordinary: again"]);
});

it("a question in a direct message deleted while the bot was down: at its start the prompt rejects, once", async () => {
  const question = await bot.ask(OWNER, dm("size"));
  await renewed(bot);
  await bot.stop();
  await deleteAsOwner(question.id);
  await bot.start();
  await expect.poll(() => botSaid()).toEqual(["ended: PROMPT_DELETED"]);
  expect(bot.logs().filter((l) => l.msg === "a dialog's waiting question was deleted")).toHaveLength(1);
  await expect.poll(() => bot.dialogs()).toEqual([]);
  expect((await bot.ask(OWNER, dm("large"))).content).toBe("ordinary: large");
});

it("a question deleted and answered while the bot was down: the answer is taken (which came first cannot be told)", async () => {
  const question = await bot.ask(OWNER, dm("size"));
  await renewed(bot);
  await bot.stop();
  await deleteAsOwner(question.id);
  const answer = bot.post(OWNER, dm("large"));
  await bot.start();
  expect((await bot.nextReply({ after: answer })).content).toBe("size: large");
  await expect.poll(() => bot.dialogs()).toEqual([]);
  expect(botSaid()).toEqual(["size: large"]);
});

it("a channel question deleted while the bot was down: at its start the prompt ends, and the next message there is ordinary", async () => {
  const q1 = await bot.ask(MEMBER, inTopic("survey"));
  await renewed(bot);
  await bot.stop();
  await deleteAsOwner(q1.id);
  await bot.start();
  await expect
    .poll(() => bot.logs().filter((l) => l.msg === "a dialog's waiting question was deleted"))
    .toHaveLength(1);
  await expect.poll(() => bot.dialogs()).toEqual([]);
  expect((await bot.ask(MEMBER, inTopic("one"))).content).toBe("ordinary: one");
});
