/**
 * A choice's emoji the server does not know: the bot's reaction on its question (the button) is
 * refused with a 400. The question waits all the same, its choices answered by text or number,
 * and a warning names the emoji and the server's reason (before, the refusal was dropped
 * silently: the author saw a question without that button and nothing in the logs). A question
 * deleted while its buttons were being put blames no emoji: its buttons refused as "Invalid
 * message(s)", the prompt ends as deleted and the refusals are logged at info (before, a warning
 * per button told the operator to check emoji names that were right). A bot run by the testing
 * kit against the sandbox over HTTP.
 */
import { defineBot } from "../../src/bot/define-bot.ts";
import { expect, test } from "../../src/testing/vitest.ts";
import { deleteMessageAs } from "../support/delete-message.ts";

const MEMBER = "member@sandbox.example";

const ship = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("ship", async (ctx) => {
      const go = await ctx.prompt("Ship it?", { choices: { yes: "chek", no: "cross_mark" } });
      await ctx.reply(`Answer: ${go.value}`);
    });
  },
});

test("a button the server refuses is logged, and its choice still answers by text", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: ship, name: "ship" });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  const question = await bot.ask(MEMBER, dm("ship"));
  expect(question.content).toBe("Ship it?\n1. :chek: yes\n2. :cross_mark: no");
  // The run ends at the question once both buttons were tried: the answer waits for its log.
  expect((await bot.ask(MEMBER, dm("yes"))).content).toBe("Answer: yes");
  const buttons = (sandbox.control.messageView(question.id)?.reactions ?? []) as { emoji_name: string }[];
  expect(buttons.map((r) => r.emoji_name)).toEqual(["cross_mark"]);
  const warnings = bot.logs().filter((l) => l.level === 40);
  expect(warnings.map((l) => l.msg)).toEqual([
    "the button :chek: could not be put on the question (Emoji 'chek' does not exist): check the emoji name in the prompt's choices",
  ]);
  expect(warnings[0]).toMatchObject({ bot: "ship", emoji: "chek", messageId: question.id });
});

const deploy = defineBot({
  setup(bot) {
    bot.command("deploy", async (ctx) => {
      const go = await ctx.prompt("Deploy?", { choices: { yes: "check", no: "cross_mark" } }).catch((err) => {
        if (err.code === "PROMPT_DELETED") return undefined;
        throw err;
      });
      await ctx.reply(go ? `Answer: ${go.value}` : "Not deployed: its question was deleted.");
    });
  },
});

test("a question deleted while its buttons are put: no warning blames the emoji names", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: deploy, name: "deploy" });
  // The bot's first button is held until the question is deleted.
  sandbox.control.delay(60_000, { paths: [/\/reactions$/] });
  const asked = bot.post(MEMBER, {
    type: "channel",
    to: "general",
    topic: "t",
    content: "@**deploy** deploy",
  });
  await expect.poll(() => sandbox.control.delayed()).toBe(1);
  const question = await bot.nextReply({ after: asked });
  await deleteMessageAs(sandbox, "owner@sandbox.example", question.id);
  sandbox.control.delay(0);
  expect((await bot.nextReply({ after: question.id })).content).toBe(
    "Not deployed: its question was deleted.",
  );
  expect(bot.logs().filter((l) => l.level === 40)).toEqual([]);
  const refused = bot.logs().filter((l) => String(l.msg).startsWith("the button"));
  expect(refused.map((l) => l.msg)).toEqual([
    "the button :check: could not be put on the question (Invalid message(s))",
    "the button :cross_mark: could not be put on the question (Invalid message(s))",
  ]);
});
