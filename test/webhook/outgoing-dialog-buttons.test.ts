/**
 * An outgoing-webhook bot gets mentions and direct messages only, never a reaction: a question
 * with emoji choices it asks through the API shows the choices, numbered, and no buttons to press
 * (a queue bot puts the emoji on the question as buttons).
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
const test = createBotTest({});

const order = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Size?", { choices: { small: "one", large: "two" } });
      const sure = await ctx.prompt(`${size.value}: sure?`, { choices: { yes: "check", no: "cross_mark" } });
      await ctx.reply(`${size.value}, ${sure.value}`);
    });
  },
});

test("as an outgoing-webhook bot, a question asked through the API gets no buttons", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: order, name: "order", outgoingWebhook: true });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  expect((await bot.ask(MEMBER, dm("order"))).content).toContain("Size?");
  // The first question went in the delivery's answer; the second through the API.
  const second = await bot.ask(MEMBER, dm("2"));
  expect(second.content).toBe("large: sure?\n1. :check: yes\n2. :cross_mark: no");
  // Kept in the dialog's log once its buttons (if any) are on it.
  await expect.poll(() => bot.dialogs()).toMatchObject([{ step: 2 }]);
  expect(sandbox.control.messageView(second.id)!.reactions).toEqual([]);
  expect((await bot.ask(MEMBER, dm("yes"))).content).toBe("large, yes");
});
