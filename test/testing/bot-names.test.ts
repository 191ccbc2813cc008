/**
 * One name, one running bot per sandbox: a second runBot by the same name would poll the same
 * account and answer every message again. A stopped bot's name is free; its own start() takes it
 * back.
 */
import { defineBot } from "bothost";
import { expect, test } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
const echo = defineBot({
  setup(bot) {
    bot.on("message", { direct: true }, (ctx) => ctx.reply(ctx.event.message.content));
  },
});

test("a second runBot by a running bot's name is refused, and each message is answered once", async ({
  runBot,
}) => {
  const first = await runBot({ bot: echo, name: "echo" });
  await expect(runBot({ bot: echo, name: "echo" })).rejects.toMatchObject({
    code: "INVALID_ARGUMENT",
    message:
      'runBot: a bot named "echo" already runs on this sandbox, and two would both answer every message to echo-bot@sandbox.example: stop() it first, or give this one another name',
  });
  const asked = first.post(MEMBER, { type: "direct", to: [first.email], content: "once?" });
  await first.handled(asked);
  // A later message answered after it: a second answer to the first would be there by then.
  expect((await first.ask(MEMBER, { type: "direct", to: [first.email], content: "and?" })).content).toBe(
    "and?",
  );
  expect(first.replies().map((m) => m.content)).toEqual(["once?", "and?"]);
});

test("two runBot calls at once by one name: one runs, the other is refused", async ({ runBot }) => {
  const both = await Promise.allSettled([runBot({ bot: echo }), runBot({ bot: echo })]);
  expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
});

test("a stopped bot's name may be used again; its own start() waits for that one to stop", async ({
  runBot,
}) => {
  const first = await runBot({ bot: echo, name: "echo" });
  await first.stop();
  const second = await runBot({ bot: echo, name: "echo" });
  await expect(first.start()).rejects.toThrow(
    'start: another bot named "echo" already runs on this sandbox, and two would both answer every message to echo-bot@sandbox.example: stop() it first',
  );
  await second.stop({ wipe: true });
  await first.start();
  expect((await first.ask(MEMBER, { type: "direct", to: [first.email], content: "back" })).content).toBe(
    "back",
  );
  // The same bot stopped and started again (restart) keeps its name.
  await first.restart();
  expect((await first.ask(MEMBER, { type: "direct", to: [first.email], content: "again" })).content).toBe(
    "again",
  );
});

test("a bot under another name on a running bot's account is refused too", async ({ runBot }) => {
  const first = await runBot({ bot: echo, name: "echo" });
  await expect(runBot({ bot: echo, name: "copy", email: first.email })).rejects.toMatchObject({
    code: "INVALID_ARGUMENT",
    message:
      'runBot: the bot "echo" already runs on this sandbox as echo-bot@sandbox.example, and two bots on one account would both answer every message to it: stop() it first, or give this one another email',
  });
  await first.stop();
  const copy = await runBot({ bot: echo, name: "copy", email: first.email });
  expect((await copy.ask(MEMBER, { type: "direct", to: [copy.email], content: "one" })).content).toBe("one");
  expect(copy.replies().map((m) => m.content)).toEqual(["one"]);
});
