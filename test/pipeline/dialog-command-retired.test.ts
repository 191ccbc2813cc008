/**
 * A deploy that retires the command a dialog waits in: the person's answer replays the dialog's
 * first message on the new code, which answers it otherwise (no such command). The dialog is
 * stopped, its person told, and the warn line says in plain words why: the first effect is made
 * now with other arguments than were recorded. The kit's bot (a real daemon) against the sandbox
 * over HTTP, restarted with the new code.
 */
import { defineBot } from "../../src/bot/define-bot.ts";
import { createBotTest, expect } from "../../src/testing/vitest.ts";

const MEMBER = "member@sandbox.example";

const timesheet = (retired: boolean) =>
  defineBot({
    setup(bot) {
      if (retired) bot.command("hours", (ctx) => ctx.reply("Hours are logged elsewhere now."));
      else
        bot.command("timesheet", async (ctx) => {
          const project = await ctx.prompt("Which project?");
          const hours = await ctx.prompt("How many hours?");
          await ctx.reply(`${hours.text} h on ${project.text}.`);
        });
    },
  });

const test = createBotTest();

test("a command retired under a waiting dialog stops it, the warn line saying why in plain words", async ({
  runBot,
}) => {
  const bot = await runBot({ bot: timesheet(false), name: "timesheet" });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  expect((await bot.ask(MEMBER, dm("timesheet"))).content).toBe("Which project?");
  expect((await bot.ask(MEMBER, dm("web"))).content).toBe("How many hours?");
  await bot.restart({ bot: timesheet(true) });
  expect((await bot.ask(MEMBER, dm("3"))).content).toBe(
    "Sorry, the bot was updated in the middle of our conversation: please start again.",
  );
  const stopped = bot.logs().filter((l) => String(l.msg).includes("no longer matches this dialog"));
  expect(stopped).toMatchObject([
    {
      level: 40,
      user: "Mel Member",
      step: 1,
      reason: "effect 1 (a send) is made now with other arguments than were recorded: the code changed.",
    },
  ]);
});
