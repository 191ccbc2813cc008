/**
 * A progress finished within `finalAfterMs` (its final text edited in) before a dialog's question
 * is found finished when the answer, given later than `finalAfterMs` after the progress began,
 * runs the handler again: the replay's `done()` makes nothing. Before, it decided anew on the
 * clock of the replay that the work had been long: it posted the final text a second time as a
 * new message and edited the first to "(finished: see below)". Through the testing kit (a daemon
 * in this process against the sandbox over HTTP) on its clock.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
const test = createBotTest({});

const checker = defineBot({
  setup(bot) {
    bot.command("check", async (ctx) => {
      const progress = await ctx.progress("Checking…");
      await progress.done("Checked.");
      const go = await ctx.prompt("Go on?", { timeout: "1h" });
      await ctx.reply(`go: ${go.text}`);
    });
  },
});

test("a progress finished before a question answered late is not finished again", async ({
  runBot,
  clock,
}) => {
  const bot = await runBot({ bot: checker });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  const said = () => bot.replies().map((m) => m.content);
  await bot.ask(MEMBER, dm("check"));
  await expect.poll(said).toEqual(["Checked.", "Go on?"]);
  await clock.advance(60_000);
  await bot.ask(MEMBER, dm("yes"));
  await expect.poll(() => bot.dialogs()).toEqual([]);
  expect(said()).toEqual(["Checked.", "Go on?", "go: yes"]);
});
