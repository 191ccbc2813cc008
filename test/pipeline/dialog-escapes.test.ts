/**
 * Escapes inside a dialog, against the sandbox over HTTP in a real daemon: `help` (and, with
 * `commands: true`, any command, or those a list names) runs while a prompt waits and the prompt keeps waiting; `back`
 * asks the previous question again and replaces its answer, recorded in the log, so that replays
 * after a restart or a crash repeat nothing and file every answer under its question.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";
const Q = ["Name?", "Team?", "Hours?"];

const form = defineBot({
  setup(bot) {
    bot.command("form", { description: "fill in the form" }, async (ctx) => {
      const name = await ctx.prompt(Q[0]!);
      const team = await ctx.prompt(Q[1]!);
      // An effect between two questions: made again when a `back` replaces the answer before it.
      await ctx.reply(`Noted: ${team.text}.`);
      const hours = await ctx.prompt(Q[2]!);
      await ctx.reply(`${name.text} / ${team.text} / ${hours.text}`);
    });
    bot.command("open", async (ctx) => {
      const a = await ctx.prompt("First?", { commands: true, back: "undo" });
      const b = await ctx.prompt("Second?", { commands: true, back: "undo" });
      await ctx.reply(`${a.text} + ${b.text}`);
    });
    bot.command("strict", async (ctx) => {
      const a = await ctx.prompt("Anything?", { commands: false });
      await ctx.reply(`got ${a.text}`);
    });
    bot.command("sign", async (ctx) => {
      const what = await ctx.prompt("What?");
      const owner = (await ctx.users.get("owner@sandbox.example"))!.user_id;
      // Answered by someone else: the back word is theirs to say as an answer, not a rewind.
      const ok = await ctx.prompt(`Sign ${what.text}?`, { from: owner });
      await ctx.reply(`${what.text}: ${ok.text}`);
    });
    bot.command("ping", (ctx) => ctx.reply("pong"));
    bot.command("team", (ctx) => ctx.reply("teams"));
    bot.command("team list", (ctx) => ctx.reply("red, blue"));
    bot.command("team join", (ctx) => ctx.reply("joined"));
    bot.command("listed", async (ctx) => {
      const a = await ctx.prompt("Which?", { commands: ["Ping", "team  list"] });
      await ctx.reply(`chose ${a.text}`);
    });
    bot.command("bad", async (ctx) => {
      await ctx.prompt("Never?", { commands: [] }).catch((err: Error) => ctx.reply(err.message));
    });
  },
});

let clock: TestClock;
let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  clock = new TestClock();
  sandbox = await startSandbox({ clock });
  bot = await runBot(sandbox, { bot: form, name: "form", clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string): SendAsInput => ({ type: "direct", to: [bot.email], content });
/** The bot's messages to the member's direct conversation, oldest first. */
const said = () => {
  const id = sandbox.control.users().find((u) => u.email === MEMBER)!.user_id;
  return bot
    .replies()
    .filter((m) => m.type === "private" && m.display_recipient.some((r) => r.id === id))
    .map((m) => m.content);
};

it("help runs while a prompt waits, and the prompt keeps waiting; another command is an answer", async () => {
  expect((await bot.ask(MEMBER, dm("form"))).content).toBe("Name?");
  const help = await bot.ask(MEMBER, dm("help"));
  expect(help.content).toContain("fill in the form");
  expect(bot.dialogs()).toMatchObject([{ step: 1 }]);
  // Not let through by default: `ping` is the answer to "Name?".
  expect((await bot.ask(MEMBER, dm("ping"))).content).toBe("Team?");
  expect((await bot.ask(MEMBER, dm("red"))).content).toBe("Noted: red.");
});

it("commands: true lets every command run while the prompt waits; commands: false lets none", async () => {
  expect((await bot.ask(MEMBER, dm("open"))).content).toBe("First?");
  expect((await bot.ask(MEMBER, dm("ping"))).content).toBe("pong");
  expect((await bot.ask(MEMBER, dm("one"))).content).toBe("Second?");
  expect((await bot.ask(MEMBER, dm("two"))).content).toBe("one + two");

  expect((await bot.ask(MEMBER, dm("strict"))).content).toBe("Anything?");
  expect((await bot.ask(MEMBER, dm("help"))).content).toBe("got help");
});

it("commands: a list lets those commands (a subcommand by its full name) run; others, and help, are answers", async () => {
  expect((await bot.ask(MEMBER, dm("listed"))).content).toBe("Which?");
  expect((await bot.ask(MEMBER, dm("ping"))).content).toBe("pong");
  expect((await bot.ask(MEMBER, dm("TEAM list"))).content).toBe("red, blue");
  expect(bot.dialogs()).toMatchObject([{ step: 1 }]);
  expect((await bot.ask(MEMBER, dm("team join"))).content).toBe("chose team join");
  expect((await bot.ask(MEMBER, dm("listed"))).content).toBe("Which?");
  expect((await bot.ask(MEMBER, dm("help"))).content).toBe("chose help");
  expect((await bot.ask(MEMBER, dm("bad"))).content).toBe(
    "ctx.prompt(): `commands` must be true, false or a list of the bot's command names.",
  );
});

it("back asks the previous question again and replaces its answer; effects after it are made again, once", async () => {
  await bot.ask(MEMBER, dm("form"));
  await bot.ask(MEMBER, dm("Ann"));
  const noted = bot.post(MEMBER, dm("red"));
  expect((await bot.nextReply({ after: noted, where: (m) => m.content === Q[2] })).content).toBe(Q[2]);
  // At "Hours?": back to "Team?".
  expect((await bot.ask(MEMBER, dm("Back"))).content).toBe(Q[1]);
  const renoted = bot.post(MEMBER, dm("blue"));
  expect((await bot.nextReply({ after: renoted, where: (m) => m.content === Q[2] })).content).toBe(Q[2]);
  // A restart replays the log with the rewind in it: nothing is said twice.
  await bot.restart({ crash: true });
  expect((await bot.ask(MEMBER, dm("8"))).content).toBe("Ann / blue / 8");
  expect(said()).toEqual([Q[0], Q[1], "Noted: red.", Q[2], Q[1], "Noted: blue.", Q[2], "Ann / blue / 8"]);
});

it("at the first question the back word is an answer; later, each back goes back one question", async () => {
  await bot.ask(MEMBER, dm("open"));
  // "undo" is this prompt's back word, but there is no question before the first.
  expect((await bot.ask(MEMBER, dm("undo"))).content).toBe("Second?");
  expect((await bot.ask(MEMBER, dm("undo"))).content).toBe("First?");
  expect((await bot.ask(MEMBER, dm("x"))).content).toBe("Second?");
  await bot.restart();
  expect((await bot.ask(MEMBER, dm("y"))).content).toBe("x + y");
  expect(said()).toEqual(["First?", "Second?", "First?", "Second?", "x + y"]);
});

it("on a question others answer (from) there is no back: the word is their answer", async () => {
  const topic = (content: string): SendAsInput => ({ type: "stream", to: "general", topic: "sign", content });
  await bot.ask(MEMBER, topic("@**form** sign"));
  expect((await bot.ask(MEMBER, topic("the lease"))).content).toBe("Sign the lease?");
  expect((await bot.ask("owner@sandbox.example", topic("back"))).content).toBe("the lease: back");
});
