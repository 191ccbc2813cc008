/**
 * A handler that does not await its `ctx.prompt()` ends before the prompt is kept: the run is over
 * for the prompt too. It is said at warn, with where the bot's code called it (and the command that
 * ran), the question is not kept as a dialog, and the person's reply is an ordinary message (not
 * taken as the answer of a replay that would do nothing with it). A synchronous handler, and one that throws, the same.
 * The testing kit against the sandbox.
 */
import { defineBot } from "../../src/bot/define-bot.ts";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { expect, test } from "../../src/testing/vitest.ts";

const MEMBER = "member@sandbox.example";

test("a prompt the handler did not await is said, and keeps no question", async ({ runBot }) => {
  const shop = defineBot({
    setup(bot) {
      bot.command("order", async (ctx) => {
        void ctx.prompt("Which size?");
        await ctx.reply("done");
      });
      bot.on("message", (ctx) => ctx.reply(`heard: ${ctx.event.message.content}`));
    },
  });
  const bot = await runBot({ bot: shop, name: "shop" });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  const order = bot.post(MEMBER, dm("order"));
  await bot.nextReply({ after: order, where: (m) => m.content === "done" });
  await expect
    .poll(() => bot.logs().filter((l) => l.level === 40))
    .toEqual([
      expect.objectContaining({
        msg: "a handler ended with a ctx.prompt() under way (not awaited): its question is not kept, and the person's reply is an ordinary message; await the prompt",
        at: expect.stringMatching(/^test\/pipeline\/prompt-unawaited\.test\.ts:\d+:\d+$/),
        command: "order",
        eventType: "message",
        messageId: order,
      }),
    ]);
  const answer = bot.post(MEMBER, dm("large"));
  expect((await bot.nextReply({ after: answer, where: (m) => m.content.startsWith("heard") })).content).toBe(
    "heard: large",
  );
  expect(bot.dialogs()).toEqual([]);
});

test("a synchronous handler's prompt is not awaited either", async ({ runBot }) => {
  const shop = defineBot({
    setup(bot) {
      bot.command("order", (ctx) => {
        void ctx.prompt("Which size?");
      });
      bot.on("message", (ctx) => ctx.reply(`heard: ${ctx.event.message.content}`));
    },
  });
  const bot = await runBot({ bot: shop, name: "shop" });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  const order = bot.post(MEMBER, dm("order"));
  await expect
    .poll(() => bot.logs().filter((l) => l.level === 40))
    .toEqual([expect.objectContaining({ msg: expect.stringContaining("not awaited"), messageId: order })]);
  const answer = bot.post(MEMBER, dm("large"));
  expect((await bot.nextReply({ after: answer, where: (m) => m.content.startsWith("heard") })).content).toBe(
    "heard: large",
  );
  expect(bot.dialogs()).toEqual([]);
});

test("a handler that throws with its prompt not awaited: said, and no question kept", async ({ runBot }) => {
  const shop = defineBot({
    setup(bot) {
      bot.command("order", async (ctx) => {
        void ctx.prompt("Which size?");
        throw new NoRetry("out of stock");
      });
      bot.on("message", (ctx) => ctx.reply(`heard: ${ctx.event.message.content}`));
    },
  });
  const bot = await runBot({ bot: shop, name: "shop" });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  const order = bot.post(MEMBER, dm("order"));
  await expect
    .poll(() => bot.logs().filter((l) => l.level === 40 && String(l.msg).includes("not awaited")))
    .toEqual([expect.objectContaining({ messageId: order })]);
  const answer = bot.post(MEMBER, dm("large"));
  expect((await bot.nextReply({ after: answer, where: (m) => m.content.startsWith("heard") })).content).toBe(
    "heard: large",
  );
  expect(bot.dialogs()).toEqual([]);
});
