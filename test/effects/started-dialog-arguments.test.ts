/**
 * `ctx.startDialog` with someone the server does not know, or a bot account, resolves false and asks nobody (before,
 * it resolved true and the run failed on the question's send, retried into a dead letter); with no
 * text, or an id that is no user id, it throws INVALID_ARGUMENT, kept as a dead letter at once
 * (before, an empty text started a dialog that sent the person the bot's help unasked). The
 * testing kit against the sandbox over HTTP.
 */
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import { expect, test } from "../../src/testing/vitest.ts";

const MEMBER = "member@sandbox.example";

const starter = defineBot({
  setup(bot) {
    bot.command("ask", { args: { id: z.coerce.number(), text: z.string() } }, async (ctx) => {
      const { id, text } = ctx.args;
      const started = await ctx.startDialog(id, text === "-" ? "" : text);
      await ctx.reply(`started: ${started}`);
    });
    // An id kept as text (read from a form, a state key, a webhook's JSON) is the usual slip.
    bot.command("ask-text", { args: { id: z.string() } }, async (ctx) => {
      await ctx.startDialog(ctx.args.id as unknown as number, "hello");
    });
    bot.command("hello", async (ctx) => {
      await ctx.prompt("Hello! How are you?");
    });
  },
});

test("someone the server does not know: false, and nobody asked", async ({ runBot, sandbox }) => {
  const bot = await runBot({ bot: starter, name: "starter" });
  const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "ask 99999 hello" });
  expect(reply.content).toBe("started: false");
  expect(bot.replies().map((m) => m.content)).toEqual(["started: false"]);
  expect(bot.dialogs()).toEqual([]);
  expect(
    sandbox.control.requests.filter((r) => r.method === "POST" && r.path === "/messages" && r.status !== 200),
  ).toEqual([]);
});

test("another bot's account: false, and nobody asked (a bot's messages reach no handler)", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: starter, name: "starter" });
  const other = sandbox.control.users().find((u) => u.is_bot && u.email !== bot.email)!;
  const reply = await bot.ask(MEMBER, {
    type: "direct",
    to: [bot.email],
    content: `ask ${other.user_id} hello`,
  });
  expect(reply.content).toBe("started: false");
  expect(bot.replies().map((m) => m.content)).toEqual(["started: false"]);
  expect(bot.dialogs()).toEqual([]);
});

test("a person the server knows is asked", async ({ runBot, sandbox }) => {
  const bot = await runBot({ bot: starter, name: "starter" });
  const member = sandbox.control.users().find((u) => u.email === MEMBER)!;
  const asked = bot.post(MEMBER, { type: "direct", to: [bot.email], content: `ask ${member.user_id} hello` });
  await bot.handled(asked);
  await expect
    .poll(() =>
      bot
        .replies()
        .map((m) => m.content)
        .sort(),
    )
    .toEqual(["Hello! How are you?", "started: true"]);
});

test("no text, or no user id: INVALID_ARGUMENT, a dead letter at once, nothing sent", async ({ runBot }) => {
  const bot = await runBot({ bot: starter, name: "starter" });
  const empty = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "ask 12 -" });
  await expect(bot.handled(empty)).rejects.toThrow(
    /\(1 attempt, kept as dead letter starter\/1\).*ctx\.startDialog\(\): text must be what the person's message would say \(a command, say\), got ""/s,
  );
  const notId = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "ask 1.5 hello" });
  await expect(bot.handled(notId)).rejects.toThrow(
    /ctx\.startDialog\(\): userId must be a user id, got 1\.5/,
  );
  expect(bot.replies()).toEqual([]);
});

test("an id given as a string: the refusal says it is a string, not only its digits", async ({ runBot }) => {
  const bot = await runBot({ bot: starter, name: "starter" });
  const text = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "ask-text 3" });
  await expect(bot.handled(text)).rejects.toThrow(
    /ctx\.startDialog\(\): userId must be a user id \(a number\), got the string "3"/,
  );
  expect(bot.replies()).toEqual([]);
});
