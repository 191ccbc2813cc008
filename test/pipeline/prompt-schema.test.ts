/**
 * A prompt's `schema`, against the sandbox over HTTP in a real daemon: a value that is no schema
 * is refused with PROMPT_OPTIONS before the question is asked (the person is not left waiting
 * for a reply that can never come), and a schema with an async refinement parses the answer
 * (zod's synchronous parse throws on one). A refused answer is told in plain words, not zod's
 * ("expected a whole number", not "Invalid input: expected int, received number"); a message the
 * schema's author wrote is kept. A misspelt option, text, placeholder or command name, a blank question, or a
 * choice that is an escape word (back, cancel) is refused the same way, named.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";

const shop = defineBot({
  setup(bot) {
    bot.command("size", async (ctx) => {
      // A bot author's slip: a string where a schema belongs.
      const size = await ctx.prompt("Which size?", { schema: "small|large" as never });
      await ctx.reply(`got ${String(size.value)}`);
    });
    bot.command("sizes", async (ctx) => {
      // Another slip: the choices' object where a schema belongs.
      await ctx.prompt("Which size?", { schema: { small: 1, large: 2 } as never });
    });
    bot.command("count", async (ctx) => {
      // A third: z.number() where z.coerce.number() was meant (an answer is text).
      const count = await ctx.prompt("How many?", { schema: z.number() });
      await ctx.reply(`got ${count.value}`);
    });
    bot.command("typo", async (ctx) => {
      // A misspelt option, which would otherwise be dropped and the default used.
      await ctx.prompt("How many?", { timout: "10m" } as never);
    });
    bot.command("texts", async (ctx) => {
      await ctx.prompt("How many?", { texts: { refsued: "No: {reason}." } } as never);
    });
    bot.command("holes", async (ctx) => {
      // A placeholder nothing fills in would reach the person as written.
      await ctx.prompt("How many?", { texts: { refused: "No: {reasno}." } });
    });
    bot.command("moved", async (ctx) => {
      await ctx.prompt("How many?", { texts: { changed: "Stopped: {reason}." } });
    });
    bot.command("stop", async (ctx) => {
      // A cancel word without its reply, which was read only once the person answered.
      const said = await ctx.prompt("How many?", { cancel: { word: "stop" } as never });
      await ctx.reply(`got ${said.text}`);
    });
    bot.command("blank", async (ctx) => {
      // A question text left empty (a setting not filled in, say): the server refuses an empty message.
      await ctx.prompt(" ");
    });
    bot.command("direction", async (ctx) => {
      // At a second question the back word goes back: a choice of that word could never be chosen.
      await ctx.prompt("Where to?");
      await ctx.prompt("Which way?", { choices: ["back", "forward"] });
    });
    bot.command("go", async (ctx) => {
      await ctx.prompt("Go on?", { choices: ["yes", "Cancel"] });
    });
    bot.command("undo", async (ctx) => {
      await ctx.prompt("Where to?");
      await ctx.prompt("How far?", { back: "stop", cancel: "STOP" });
    });
    bot.command("tally", async (ctx) => {
      // A misspelt command in `commands`: it would let nothing through, the command taken as the answer.
      await ctx.prompt("How many?", { commands: ["size", "hlep"] });
    });
    bot.command("named", async (ctx) => {
      await ctx.prompt("How many?", { id: 5 as never });
    });
    bot.command("code", async (ctx) => {
      const code = await ctx.prompt("Which code?", {
        schema: z
          .string()
          .refine(async (s) => /^[a-z]{3}$/.test(s), "three letters, please")
          .transform(async (s) => s.toUpperCase()),
      });
      await ctx.reply(`code ${code.value}`);
    });
    bot.command("order", async (ctx) => {
      const count = await ctx.prompt("How many?", { schema: z.coerce.number().int().min(1).max(9) });
      await ctx.reply(`order ${count.value}`);
    });
  },
});

let clock: TestClock;
let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  clock = new TestClock();
  sandbox = await startSandbox({ clock });
  bot = await runBot(sandbox, { bot: shop, name: "shop", clock, config: "retries: { attempts: 1 }" });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });

it("a schema that cannot parse is refused before the question is asked", async () => {
  const asked = bot.post(MEMBER, dm("size"));
  await expect(bot.handled(asked)).rejects.toThrow(/`schema` must be a zod schema .*got "small\|large"/);
  expect(bot.replies()).toEqual([]);
  expect(bot.dialogs()).toEqual([]);
  const object = bot.post(MEMBER, dm("sizes"));
  await expect(bot.handled(object)).rejects.toThrow(
    /`schema` must be a zod schema .*got an object without safeParse/,
  );
  const number = bot.post(MEMBER, dm("count"));
  await expect(bot.handled(number)).rejects.toThrow(
    "ctx.prompt(): `schema` expects a number, but an answer is text, so it would refuse every one: use z.coerce.number(), which reads the text.",
  );
  expect(bot.replies()).toEqual([]);
  expect(bot.dialogs()).toEqual([]);
});

it("an unknown option or text, or a cancel or id of the wrong shape, is refused before the question is asked", async () => {
  const typo = bot.post(MEMBER, dm("typo"));
  await expect(bot.handled(typo)).rejects.toThrow(
    'ctx.prompt(): unknown option "timout". Did you mean "timeout"? Valid: id, timeout, schema,',
  );
  const texts = bot.post(MEMBER, dm("texts"));
  await expect(bot.handled(texts)).rejects.toThrow(
    'ctx.prompt(): unknown text "refsued". Did you mean "refused"? Valid: refused, gaveUp, changed, lost.',
  );
  const holes = bot.post(MEMBER, dm("holes"));
  await expect(bot.handled(holes)).rejects.toThrow(
    "ctx.prompt(): `texts.refused` has {reasno}, which nothing fills in: its placeholders are {reason}, {question} and {tries}.",
  );
  const moved = bot.post(MEMBER, dm("moved"));
  await expect(bot.handled(moved)).rejects.toThrow(
    "ctx.prompt(): `texts.changed` has {reason}, which is filled in only in texts.refused and texts.gaveUp.",
  );
  const stop = bot.post(MEMBER, dm("stop"));
  await expect(bot.handled(stop)).rejects.toThrow(
    'ctx.prompt(): `cancel` must be a word, false, or { word, reply } (two texts), got {"word":"stop"}.',
  );
  const named = bot.post(MEMBER, dm("named"));
  await expect(bot.handled(named)).rejects.toThrow("ctx.prompt(): `id` must be a text, got 5.");
  const tally = bot.post(MEMBER, dm("tally"));
  await expect(bot.handled(tally)).rejects.toThrow(
    'ctx.prompt(): `commands` names "hlep", which is no command of the bot. Did you mean "help"? Its commands: help, size, sizes,',
  );
  const blank = bot.post(MEMBER, dm("blank"));
  await expect(bot.handled(blank)).rejects.toThrow(
    'ctx.prompt(): the question must be a text that is not blank, got " ". [request refused before it was sent (PROMPT_OPTIONS): not retried]',
  );
  expect(bot.replies()).toEqual([]);
  expect(bot.dialogs()).toEqual([]);
});

it("a choice that is the back or cancel word, or a back word that is the cancel word, is refused before the question is asked", async () => {
  expect((await bot.ask(MEMBER, dm("direction"))).content).toBe("Where to?");
  await expect(bot.handled(bot.post(MEMBER, dm("north")))).rejects.toThrow(
    'ctx.prompt(): `choices` include "back", the back word: typed, it asks the previous question again and chooses nothing. Give `back` another word, or back: false.',
  );
  await expect(bot.handled(bot.post(MEMBER, dm("go")))).rejects.toThrow(
    'ctx.prompt(): `choices` include "Cancel", the cancel word: typed, it ends the dialog and chooses nothing. Give `cancel` another word, or cancel: false.',
  );
  expect((await bot.ask(MEMBER, dm("undo"))).content).toBe("Where to?");
  await expect(bot.handled(bot.post(MEMBER, dm("north")))).rejects.toThrow(
    'ctx.prompt(): `back` and `cancel` are the same word, "stop": give one of them another.',
  );
  expect(bot.replies().map((m) => m.content)).toEqual(["Where to?", "Where to?"]);
  expect(bot.dialogs()).toEqual([]);
});

it("a schema with an async refinement and transform parses the answer", async () => {
  expect((await bot.ask(MEMBER, dm("code"))).content).toBe("Which code?");
  expect((await bot.ask(MEMBER, dm("ab1"))).content).toBe(
    "I could not use that: three letters, please. Which code?",
  );
  expect((await bot.ask(MEMBER, dm("abc"))).content).toBe("code ABC");
});

it("a refused answer is told in plain words, the last one in the give-up line too", async () => {
  expect((await bot.ask(MEMBER, dm("order"))).content).toBe("How many?");
  expect((await bot.ask(MEMBER, dm("two"))).content).toBe(
    "I could not use that: expected a number. How many?",
  );
  expect((await bot.ask(MEMBER, dm("12"))).content).toBe(
    "I could not use that: expected at most 9. How many?",
  );
  expect((await bot.ask(MEMBER, dm("3.5"))).content).toBe(
    "That makes 3 answers I could not use (expected a whole number).",
  );
});
