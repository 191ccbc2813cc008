/**
 * A button pressed under another name of its emoji: 👍 is `+1`, `thumbs_up` and `like` on the
 * server, which counts reactions by emoji code and, for a second reaction with the same code,
 * reports the first reactor's name. A person who presses 👍 (as `+1`, the emoji picker's name)
 * before the bot put its `thumbs_up` button (its put held, or refused) makes the reaction whose
 * name the server keeps: the press carries `+1`, the bot's button then becomes a vote under `+1`.
 * The press answers all the same: a button is matched by its emoji's code, learned from the
 * server's emoji data and kept in the dialog's log, so that it matches after a restart too, even
 * when the emoji data cannot be read then. Without the data, a button is matched by its name (as
 * a question kept before codes were). Against the sandbox over HTTP, in a real daemon.
 */
import { defineBot } from "../../src/bot/define-bot.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { TestBot } from "../../src/testing/run-bot.ts";
import { expect, test } from "../../src/testing/vitest.ts";

const MEMBER = "member@sandbox.example";
const EMOJI_DATA = "/static/emoji.json";

const vote = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("ship", async (ctx) => {
      const answer = await ctx.prompt("Ship it?", { choices: { yes: "thumbs_up", no: "cross_mark" } });
      await ctx.reply(`${answer.value} (by ${answer.by.name})`);
    });
  },
});

const dm = (bot: TestBot, content: string) => ({ type: "direct" as const, to: [bot.email], content });

/** The reactions on message `id` as the server holds them: name, and whether the bot's. */
const reactionsOn = (sandbox: Sandbox, bot: TestBot, id: number) =>
  ((sandbox.control.messageView(id)?.reactions ?? []) as { emoji_name: string; user_id: number }[]).map(
    (r) => `${r.emoji_name}/${r.user_id === bot.userId ? "bot" : "member"}`,
  );

/** A path filter that matches the first reaction put only (the bot's first button). */
function firstReaction(): RegExp {
  let used = false;
  const once = /\/reactions$/;
  once.test = (path: string) => {
    if (used || !path.endsWith("/reactions")) return false;
    used = true;
    return true;
  };
  return once;
}

test("a press under another name of the button's emoji, made before the bot put that button, answers", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: vote, name: "vote" });
  // The bot's first button (thumbs_up) is held at the server; the person's press is not.
  sandbox.control.delay(600_000, { paths: [firstReaction()] });
  const asked = bot.post(MEMBER, dm(bot, "ship"));
  await expect.poll(() => sandbox.control.delayed()).toBe(1);
  const question = await bot.nextReply({ after: asked });
  await bot.react(question, "+1", { as: MEMBER });
  sandbox.control.delay(0);
  // The bot's thumbs_up became a vote for the person's 👍, under the person's name for it.
  await expect
    .poll(() => reactionsOn(sandbox, bot, question.id))
    .toEqual(["+1/member", "+1/bot", "cross_mark/bot"]);
  expect((await bot.nextReply({ after: question.id })).content).toBe("yes (by Mel Member)");
  await expect.poll(() => bot.dialogs()).toEqual([]);
  // The emoji data is read once per bot, not per question.
  const again = await bot.ask(MEMBER, dm(bot, "ship"));
  await bot.react(again, "like", { as: MEMBER });
  expect((await bot.nextReply({ after: again.id })).content).toBe("yes (by Mel Member)");
  expect(sandbox.control.requests.filter((r) => r.path === EMOJI_DATA)).toHaveLength(1);
});

test("a button's code is kept with the question: a press under another name after a restart answers without the emoji data", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: vote, name: "vote" });
  // The server refuses the bot's thumbs_up button: the question waits without it.
  sandbox.control.failNext(1, { status: 400, paths: [/\/reactions$/], methods: ["POST"] });
  const asked = bot.post(MEMBER, dm(bot, "ship"));
  const question = await bot.nextReply({ after: asked });
  // Handled once the question's log is kept, its buttons put before.
  await bot.handled(asked);
  expect(reactionsOn(sandbox, bot, question.id)).toEqual(["cross_mark/bot"]);
  await bot.stop();
  // From now on the emoji data cannot be read.
  sandbox.control.failNext(100, { status: 404, paths: [EMOJI_DATA] });
  await bot.react(question, "+1", { as: MEMBER });
  await bot.start();
  expect((await bot.nextReply({ after: question.id })).content).toBe("yes (by Mel Member)");
  await expect.poll(() => bot.dialogs()).toEqual([]);
});

test("without the emoji data a button is matched by its name, as before", async ({ runBot, sandbox }) => {
  sandbox.control.failNext(100, { status: 404, paths: [EMOJI_DATA] });
  const bot = await runBot({ bot: vote, name: "vote" });
  const question = await bot.ask(MEMBER, dm(bot, "ship"));
  await expect
    .poll(() => reactionsOn(sandbox, bot, question.id))
    .toEqual(["thumbs_up/bot", "cross_mark/bot"]);
  // Another name of 👍 on the bot's button: the server reports it under the button's name.
  await bot.react(question, "like", { as: MEMBER });
  expect((await bot.nextReply({ after: question.id })).content).toBe("yes (by Mel Member)");
});
