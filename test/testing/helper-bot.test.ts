/**
 * The helper bot of docs/guide/commands.md tested as its author would, with the kit alone: a
 * command and its refusal, a reminder delivered by moving the clock, and a reaction it makes
 * without answering, awaited with `handled`.
 */
import { createBotTest, expect } from "bothost/testing/vitest";
import helper from "../fixtures/bots/helper-bot.ts";

const MEMBER = "member@sandbox.example";
const test = createBotTest({
  users: [{ email: "mia@sandbox.example", full_name: "Mia", role: "moderator" }],
});

test("reminds when the clock passes the time, counts thanks, purges for moderators only", async ({
  runBot,
  clock,
  sandbox,
}) => {
  const bot = await runBot({ bot: helper, name: "helper" });
  const dm = (from: string, content: string) => bot.ask(from, { type: "direct", to: [bot.email], content });

  const booked = await dm(MEMBER, "remind 10 stretch your legs");
  expect(booked.content).toBe("OK, in 10 min.");
  await clock.advance(11 * 60_000);
  const reminder = await bot.nextReply({ after: booked.id });
  expect(reminder.type === "private" && reminder.display_recipient.map((r) => r.email).sort()).toEqual([
    "helper-bot@sandbox.example",
    MEMBER,
  ]);
  expect(reminder.content).toBe("Reminder: stretch your legs");

  const thanks = bot.post(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "@**helper** thanks!",
  });
  await bot.handled(thanks);
  expect(sandbox.control.messageView(thanks)?.reactions).toMatchObject([{ emoji_name: "heart" }]);
  expect((await dm(MEMBER, "stats")).content).toBe("1 reminders set, 1 thanks received.");

  expect((await dm(MEMBER, "purge-stats")).content).toBe(
    "Sorry, only moderators, administrators and owners may run `purge-stats`.",
  );
  expect((await dm("mia@sandbox.example", "purge-stats")).content).toBe("Stats reset.");
});
