/**
 * The standup bot (bots/standup.ts) against the sandbox over HTTP: `standup skip` said once the
 * day is answered or skipped changes nothing. The day's topic keeps one line per person, and the
 * report still says what they did first. It imports "bothost", which resolves to dist/: run
 * `npm run build` first (`npm test` does).
 */
import { createBotTest, expect } from "bothost/testing/vitest";
import standup, { QUESTIONS } from "../../../bots/standup.ts";

const OWNER = "owner@sandbox.example";
const MEL = "mel@sandbox.example";
const BOT = "standup-bot@sandbox.example";

const test = createBotTest({
  org: {
    realm: { name: "Sandbox", host: "sandbox.example" },
    users: [
      { email: OWNER, full_name: "Olive Owner", role: "owner" },
      { email: MEL, full_name: "Mel Member" },
    ],
    bots: [{ email: BOT, full_name: "Standup", type: "generic", owner: OWNER }],
    channels: [{ name: "standups", subscribers: [OWNER, MEL, BOT] }],
    user_groups: [{ name: "engineering", members: [MEL] }],
  },
  // Monday 30 November 2026, 10:00 in Berlin: after the set time.
  clock: { start: "2026-11-30T09:00:00Z" },
});

const settings = { group: "engineering", channel: "standups", timezone: "Europe/Berlin" };
const dm = (content: string) => ({ type: "direct" as const, to: [BOT], content });
const topic = (sandbox: { control: { messages(): Record<string, unknown>[] } }) =>
  sandbox.control
    .messages()
    .filter((m) => m.type === "stream" && m.topic === "standup 2026-11-30")
    .map((m) => String(m.content));

test("standup skip once the day is answered: told they are done, nothing posted", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  expect((await bot.ask(MEL, dm("standup"))).content).toBe(QUESTIONS[0]);
  expect((await bot.ask(MEL, dm("the build"))).content).toBe(QUESTIONS[1]);
  expect((await bot.ask(MEL, dm("the tests"))).content).toBe(QUESTIONS[2]);
  expect((await bot.ask(MEL, dm("nothing"))).content).toMatch(/^Thanks!/);

  expect((await bot.ask(MEL, dm("standup skip sick"))).content).toBe("You are done for today.");
  expect(topic(sandbox)).toEqual([
    `**Mel Member**\n* ${QUESTIONS[0]} the build\n* ${QUESTIONS[1]} the tests\n* ${QUESTIONS[2]} nothing`,
  ]);
  expect((await bot.ask(OWNER, dm("standup report"))).content).toBe(
    "Standup 2026-11-30:\n* Mel Member: answered",
  );
});

test("standup skip twice: the day is skipped once", async ({ runBot, sandbox }) => {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  expect((await bot.ask(MEL, dm("standup skip on holiday"))).content).toBe("Skipped for today.");
  expect((await bot.ask(MEL, dm("standup skip"))).content).toBe("You are done for today.");
  expect(topic(sandbox)).toEqual(["**Mel Member** skips today: on holiday."]);
});
