/**
 * A press on the buttons of a question asked again (after a refused answer) is on the refusal's
 * message: the answer's `message.id` is that message's, and the kit's `progress(id)` given it
 * waits for the run that press began. Before, the answer named the first question (where no
 * button answers any more) and `progress(id)` resolved at once, the press not yet taken. The
 * testing kit against the sandbox over HTTP.
 */
import { defineBot } from "../../../src/bot/define-bot.ts";
import { expect, test } from "../../../src/testing/vitest.ts";

const MEMBER = "member@sandbox.example";

const picker = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("pick", async (ctx) => {
      const a = await ctx.prompt("Pick one:", {
        id: "pick",
        choices: { yes: "thumbs_up", no: "thumbs_down" },
      });
      const progress = await ctx.progress("Working…");
      await progress.done(`picked ${a.value} on ${a.message.id}`);
    });
  },
});

test("a press on a question asked again answers with the message pressed", async ({ runBot }) => {
  const bot = await runBot({ bot: picker, name: "picker" });
  const dm = { type: "direct" as const, to: [bot.email] };
  const asked = await bot.nextReply({ after: bot.post(MEMBER, { ...dm, content: "pick" }) });
  const again = await bot.nextReply({ after: bot.post(MEMBER, { ...dm, content: "maybe" }) });
  expect(again.content).toMatch(/^I could not use that/);
  await bot.react(again.id, "thumbs_up", { as: MEMBER });
  const shown = await bot.progress(again.id);
  expect(shown.text).toBe(`picked yes on ${again.id}`);
  expect(asked.id).toBeLessThan(again.id);
});
