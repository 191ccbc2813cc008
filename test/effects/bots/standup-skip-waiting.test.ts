/**
 * The standup bot (bots/standup.ts): `standup skip [reason]` said in the direct message where the
 * questions wait skips the day, as its documentation says (docs/guide/shipped-bots.md: "Answering
 * `skip`, or saying `standup skip [reason]`, skips the day"), rather than being filed as the answer
 * to the question waiting there and posted among the person's answers.
 */
import type { Sandbox, TestBot } from "bothost/testing";
import { createBotTest, expect } from "bothost/testing/vitest";
import standup, { QUESTIONS } from "../../../bots/standup.ts";

const OWNER = "owner@sandbox.example";
const MEL = "mel@sandbox.example";
const DEE = "dee@sandbox.example";
const BOT = "standup-bot@sandbox.example";

const test = createBotTest({
  org: {
    realm: { name: "Sandbox", host: "sandbox.example" },
    users: [
      { email: OWNER, full_name: "Olive Owner", role: "owner" },
      { email: MEL, full_name: "Mel Member" },
      { email: DEE, full_name: "Dee Dev" },
    ],
    bots: [{ email: BOT, full_name: "Standup", type: "generic", owner: OWNER }],
    channels: [{ name: "standups", subscribers: [OWNER, MEL, DEE, BOT] }],
    user_groups: [{ name: "engineering", members: [MEL, DEE] }],
  },
  // Monday 30 November 2026, 09:29 in Berlin.
  clock: { start: "2026-11-30T08:29:00Z" },
});

const settings = { group: "engineering", channel: "standups", timezone: "Europe/Berlin" };
const dm = (content: string) => ({ type: "direct" as const, to: [BOT], content });

const towardOf = (bot: TestBot, sandbox: Sandbox) => (email: string) => {
  const id = sandbox.control.users().find((u) => u.email === email)!.user_id;
  return bot
    .replies()
    .filter((m) => m.type === "private" && m.display_recipient.some((r) => r.id === id))
    .map((m) => m.content);
};

test("standup skip [reason] said where the questions wait skips the day", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  const toward = towardOf(bot, sandbox);
  const topic = () =>
    bot
      .replies()
      .filter((m) => m.type === "stream" && m.subject === "standup 2026-11-30")
      .map((m) => m.content);
  await clock.advance(60_000);
  await expect.poll(() => [toward(MEL), toward(DEE)]).toEqual([[QUESTIONS[0]], [QUESTIONS[0]]]);

  // At the first question, with a reason; at the second, without one.
  expect((await bot.ask(MEL, dm("standup skip sick today"))).content).toBe("Skipped for today.");
  expect((await bot.ask(DEE, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  expect((await bot.ask(DEE, dm("Standup Skip"))).content).toBe("Skipped for today.");

  await expect.poll(() => bot.dialogs()).toEqual([]);
  expect(topic()).toEqual(["**Mel Member** skips today: sick today.", "**Dee Dev** skips today."]);
  expect(toward(MEL)).toEqual([QUESTIONS[0], "Skipped for today."]);
  expect(toward(DEE)).toEqual([QUESTIONS[0], QUESTIONS[1], "Skipped for today."]);
  const report = await bot.ask(OWNER, dm("standup report"));
  expect(report.content).toBe("Standup 2026-11-30:\n* Mel Member: skipped\n* Dee Dev: skipped");
  // Skipped: nothing more is asked.
  expect((await bot.ask(MEL, dm("standup"))).content).toBe("You are done for today.");
});
