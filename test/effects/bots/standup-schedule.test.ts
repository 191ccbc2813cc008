/**
 * The standup bot (bots/standup.ts) against the sandbox over HTTP, on a moved clock, keeps its
 * set-time job's history when its `cron` or `timezone` setting changes, and when it is upgraded
 * from a version whose job had no id (its history stored under the schedule): a start past the
 * set time asks that day's questions (run-once), and never a day's twice. It imports "bothost",
 * which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import type { BotApi } from "bothost";
import type { Sandbox, TestBot } from "bothost/testing";
import { type BotFixtures, createBotTest, expect } from "bothost/testing/vitest";
import standup, { QUESTIONS } from "../../../bots/standup.ts";
import { BOT, DEE, MEL, STANDUP_ORG, settings } from "./standup-org.ts";

const test = createBotTest({
  org: STANDUP_ORG,
  // Monday 30 November 2026, 09:29 in Berlin.
  clock: { start: "2026-11-30T08:29:00Z" },
});

const NO_ANSWER = "No answer, so no standup from you today. Say `standup` to answer later.";
type Standup = typeof standup;

/** The standup bot with some of its settings changed in the config. */
const configured = (change: { cron?: string; timezone?: string }): Standup => ({
  ...standup,
  setup: (bot, s) => standup.setup(bot, { ...s, ...change }),
});

/** The standup bot as deployed before its set-time job had an id (stored under its schedule). */
const withoutJobId: Standup = {
  ...standup,
  setup: (bot, s) => {
    const cron: BotApi["cron"] = (expression: string, options: unknown, handler?: unknown) => {
      const { id: _, ...rest } = options as { id?: string };
      return bot.cron(expression, rest, handler as never);
    };
    return standup.setup(
      new Proxy(bot, { get: (b, key) => (key === "cron" ? cron : Reflect.get(b, key)) }),
      s,
    );
  },
};

/** What the bot said to each of Mel and Dee in their direct messages, oldest first. */
const towardBoth = (bot: TestBot, sandbox: Sandbox) => () =>
  [MEL, DEE].map((email) => {
    const id = sandbox.control.users().find((u) => u.email === email)!.user_id;
    return bot
      .replies()
      .filter((m) => m.type === "private" && m.display_recipient.some((r) => r.id === id))
      .map((m) => m.content);
  });

const MONDAY = [QUESTIONS[0], NO_ANSWER];
const TUESDAY = [
  [...MONDAY, QUESTIONS[0]],
  [...MONDAY, QUESTIONS[0]],
];

/** `first` running from Monday 09:29; asked at 09:30, both waits passed unanswered at 14:00, stopped. */
async function mondayRun({ runBot, sandbox, clock }: BotFixtures, first: Standup) {
  const bot = await runBot({ bot: first, name: "standup", email: BOT, settings });
  const toward = towardBoth(bot, sandbox);
  await clock.advance(60_000); // Monday 09:30
  await expect.poll(toward).toEqual([[QUESTIONS[0]], [QUESTIONS[0]]]);
  await clock.advance(4.5 * 3_600_000); // Monday 14:00: the waits passed
  await expect.poll(toward).toEqual([MONDAY, MONDAY]);
  await bot.stop();
  return { bot, toward };
}

// Started again on Tuesday past the new set time with the setting changed: Tuesday's questions go out.
for (const [change, back] of [
  [{ cron: "0 9 * * 1-5" }, 19 * 3_600_000 + 10 * 60_000], // Tuesday 09:10, set at 09:00
  [{ timezone: "UTC" }, 20 * 3_600_000 + 40 * 60_000], // Tuesday 10:40 in Berlin, set at 09:30 UTC
] as const) {
  test(`${JSON.stringify(change)} changed, started past the new set time: asked that day`, async ({
    runBot,
    sandbox,
    clock,
  }) => {
    const { bot, toward } = await mondayRun({ runBot, sandbox, clock }, standup);
    await clock.advance(back);
    await bot.restart({ bot: configured(change) });
    await expect.poll(toward).toEqual(TUESDAY);
  });
}

// The version before kept the job's last run under its schedule: read at the upgrade.
test("upgraded from a job without an id, down over Tuesday's set time: asked at the start", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward } = await mondayRun({ runBot, sandbox, clock }, withoutJobId);
  await clock.advance(19 * 3_600_000 + 40 * 60_000); // Tuesday 09:40
  await bot.restart({ bot: standup });
  await expect.poll(toward).toEqual(TUESDAY);
});

// Upgraded the same day after the set time's run: that day is not asked again; the next is, once.
test("upgraded from a job without an id after the day's run: not asked again that day", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward } = await mondayRun({ runBot, sandbox, clock }, withoutJobId);
  await bot.restart({ bot: standup }); // Monday 14:00
  await clock.advance(19.5 * 3_600_000); // Tuesday 09:30
  await expect.poll(toward).toEqual(TUESDAY);
});
