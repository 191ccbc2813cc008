/**
 * `ctx.prompt()` in a handler of an event that is no message (a reaction): the error names the
 * event and the way to ask someone (ctx.startDialog). Before, it said the prompt "needs a message
 * handled by a bot runtime", though a bot runtime ran it. The testing kit against the sandbox.
 */
import { defineBot } from "../../src/bot/define-bot.ts";
import { expect, test } from "../../src/testing/vitest.ts";

const MEMBER = "member@sandbox.example";

test("a prompt in a reaction handler says why it cannot ask, and what can", async ({ runBot }) => {
  const errors: string[] = [];
  const asker = defineBot({
    setup(bot) {
      bot.on("reaction", { op: "add" }, async (ctx) => {
        await ctx.prompt("Why that emoji?").catch((err: Error) => errors.push(err.message));
        await ctx.send({ type: "direct", to: [ctx.event.user_id], content: "asked nothing" });
      });
    },
  });
  const bot = await runBot({ bot: asker, name: "asker" });
  const id = bot.post(MEMBER, { type: "stream", to: "general", topic: "t", content: "hi" });
  await bot.react(id, "tada", { as: MEMBER });
  await bot.nextReply({ after: id, where: (m) => m.content === "asked nothing" });
  expect(errors).toEqual([
    "ctx.prompt() asks the person whose message is handled, and a reaction event has none: to ask someone, ctx.startDialog(userId, text).",
  ]);
});
