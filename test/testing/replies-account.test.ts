/**
 * `replies()` lists what that TestBot's bot sent, when bots take one account in turns (one
 * stopped, another run with the same email): the account's messages from each of its starts until
 * another bot starts on the account, and the scheduled messages it asked the server to send, at
 * whatever time the server sends them.
 */
import { expect, test } from "bothost/testing/vitest";
import echo from "../../bots/echo.ts";
import { reminder } from "../support/reminder-bot.ts";

const MEMBER = "member@sandbox.example";
const dm = (to: string, content: string) => ({ type: "direct" as const, to: [to], content });
const contents = (messages: { content: string }[]) => messages.map((m) => m.content);

test("a stopped bot's replies are its own, not those of a later bot on its account", async ({ runBot }) => {
  const first = await runBot({ bot: echo, name: "echo" });
  await first.ask(MEMBER, dm(first.email, "one"));
  await first.stop();

  const second = await runBot({ bot: echo, name: "echo", settings: { prefix: "2: " } });
  expect(second.email).toBe(first.email);
  await second.ask(MEMBER, dm(second.email, "two"));
  expect(contents(first.replies())).toEqual(["one"]);
  expect(contents(second.replies())).toEqual(["2: two"]);
  // Nor does a stopped bot's nextReply take the later bot's message.
  await expect(first.nextReply({ timeoutMs: 200, where: (m) => m.content !== "one" })).rejects.toThrow(
    /^echo sent no message that `where` accepts within 200 ms \(it is stopped: start\(\) it, and it catches the message up\) \(`where` refused its message \d+ \("one"\)\)$/,
  );

  // Started again once the other stops, it adds what it sends from then on: its own answer to
  // "two", caught up as posted while it was down, then the next.
  await second.stop();
  await first.start();
  await first.nextReply({ where: (m) => m.content === "two" });
  await first.ask(MEMBER, dm(first.email, "three"));
  expect(contents(first.replies())).toEqual(["one", "two", "three"]);
  expect(contents(second.replies())).toEqual(["2: two"]);
});

test("a message the server sends at the time a bot scheduled is that bot's, whichever bot runs then", async ({
  runBot,
  clock,
}) => {
  const first = await runBot({ bot: reminder, name: "reminder" });
  await first.ask(MEMBER, dm(first.email, "remind me"));
  await first.stop();
  const second = await runBot({ bot: echo, name: "reminder" });

  await clock.advance(6 * 60_000);
  expect(contents(first.replies())).toEqual(["I will remind you in 5 minutes.", "tea time"]);
  expect(contents(second.replies())).toEqual([]);
});
