/**
 * The standup bot (bots/standup.ts) against the sandbox over HTTP, on a moved clock: at 09:30 on a
 * weekday each member of the group is asked the three questions in a direct message; answers go
 * to the day's topic, `skip` skips; a crash in the middle of someone's answers goes on at their
 * question; moderators get the report; one who says `standup` while the set time's question to
 * them is being sent is asked once, and told the questions are under way; `standup` said in a
 * channel asks in their direct messages, never a second set while one waits there. It imports "bothost",
 * which resolves to dist/: run `npm run build` first (`npm test` does).
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox, TestBot } from "bothost/testing";
import { type BotFixtures, createBotTest, expect } from "bothost/testing/vitest";
import standup, { expired, QUESTIONS, SENT, UNDER_WAY, WAITING } from "../../../bots/standup.ts";
import { FileStore } from "../../../dist/state/file-store.js";
import { startInProcessDaemon } from "../../../dist/testing/in-process-daemon.js";
import { gatedBackend, StoreGate } from "../../support/gated-store.ts";
import { addToGroup } from "../../support/group-members.ts";
import { BOT, DEE, MEL, OWNER, STANDUP_ORG, settings } from "./standup-org.ts";

const test = createBotTest({
  org: STANDUP_ORG,
  // Monday 30 November 2026, 09:29 in Berlin.
  clock: { start: "2026-11-30T08:29:00Z" },
});

const dm = (content: string) => ({ type: "direct" as const, to: [BOT], content });
const inTopic = (content: string) => ({ type: "channel" as const, to: "standups", topic: "chat", content });

/** What the bot said to `email` in their direct messages, oldest first. */
const towardOf = (bot: TestBot, sandbox: Sandbox) => (email: string) => {
  const id = sandbox.control.users().find((u) => u.email === email)!.user_id;
  return bot
    .replies()
    .filter((m) => m.type === "private" && m.display_recipient.some((r) => r.id === id))
    .map((m) => m.content);
};

/** What the bot posted to the topic of Monday 30 November, oldest first. */
const dayTopic = (bot: TestBot) =>
  bot
    .replies()
    .filter((m) => m.type === "stream" && m.subject === "standup 2026-11-30")
    .map((m) => m.content);

/** The standup bot started at 09:29, then 09:30: the first question waits for each of `people`. */
async function askedAt930({ runBot, sandbox, clock }: BotFixtures, people = [MEL, DEE]) {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  const toward = towardOf(bot, sandbox);
  await clock.advance(60_000);
  await expect.poll(() => people.map(toward)).toEqual(people.map(() => [QUESTIONS[0]]));
  return { bot, toward, topic: () => dayTopic(bot) };
}

test("asks the group at 09:30, posts each person's answers to the day's topic, through a crash", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward, topic } = await askedAt930({ runBot, sandbox, clock });

  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  await bot.restart({ crash: true });
  expect((await bot.ask(MEL, dm("release notes"))).content).toBe(QUESTIONS[2]);
  expect((await bot.ask(DEE, dm("skip"))).content).toBe("Skipped for today.");
  expect((await bot.ask(MEL, dm("none"))).content).toBe(
    "Thanks! Posted to #**standups>standup 2026-11-30**.",
  );
  expect(toward(MEL)).toEqual([...QUESTIONS, "Thanks! Posted to #**standups>standup 2026-11-30**."]);
  expect(topic()).toEqual([
    "**Dee Dev** skips today.",
    `**Mel Member**\n* ${QUESTIONS[0]} fixed the build\n* ${QUESTIONS[1]} release notes\n* ${QUESTIONS[2]} none`,
  ]);

  const report = await bot.ask(OWNER, dm("standup report"));
  expect(report.content).toBe("Standup 2026-11-30:\n* Mel Member: answered\n* Dee Dev: skipped");
  expect((await bot.ask(MEL, dm("standup"))).content).toBe("You are done for today.");
  expect((await bot.ask(MEL, dm("standup report"))).content).toMatch(/^Sorry, only moderators/);
});

test("standup skip with a reason, or standup before 09:30: nobody is asked again that day", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  expect((await bot.ask(DEE, dm("standup skip on holiday"))).content).toBe("Skipped for today.");
  expect((await bot.ask(MEL, dm("standup"))).content).toBe(QUESTIONS[0]);
  const before = bot.replies().length;
  await clock.advance(60_000); // 09:30: Dee skipped, Mel's dialog is under way
  await bot.ask(MEL, dm("the tests"));
  const asked = bot
    .replies()
    .slice(before)
    .map((m) => m.content);
  expect(asked).toEqual([QUESTIONS[1]]);
  const posted = sandbox.control.messages().map((m) => String(m.content));
  expect(posted).toContain("**Dee Dev** skips today: on holiday.");
});

// A member who says `standup` while the set time's question to them is being sent: asked once,
// and not told they gave no answer.
test("standup said as the 09:30 question goes out: asked once", async ({ runBot, sandbox, clock }) => {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  const toward = towardOf(bot, sandbox);
  // The first questions' sends are held: the dialogs are begun, their questions not yet out.
  sandbox.control.delay(3_600_000, { paths: [/^\/messages$/] });
  await clock.advance(60_000);
  await expect.poll(() => sandbox.control.delayed()).toBe(2);
  const own = sandbox.control.sendAs(MEL, dm("standup")).id;
  sandbox.control.delay(0);
  await bot.handled(own);
  await expect.poll(() => toward(DEE)).toEqual([QUESTIONS[0]]);
  expect(toward(MEL)).toEqual([QUESTIONS[0], UNDER_WAY]);
  // Their `standup`, sent before the question, is not its answer: the next message is.
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
});

// The set time's questions wait in their direct messages; they skip the day in a channel, then
// answer, or let the wait pass: told they are done (or nothing), not that the bot was updated,
// nothing more asked, nothing more posted.
test("a skip elsewhere ends the 09:30 questions still waiting", async ({ runBot, sandbox, clock }) => {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  const toward = towardOf(bot, sandbox);
  await clock.advance(60_000);
  await expect.poll(() => [toward(MEL), toward(DEE)]).toEqual([[QUESTIONS[0]], [QUESTIONS[0]]]);
  for (const who of [MEL, DEE]) {
    const skip = await bot.ask(who, inTopic("@**Standup** standup skip on leave"));
    expect(skip.content).toBe("Skipped for today.");
  }
  expect((await bot.ask(MEL, inTopic("@**Standup** standup"))).content).toBe("You are done for today.");
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe("You are done for today.");
  expect((await bot.ask(MEL, dm("standup"))).content).toBe("You are done for today.");
  expect(toward(MEL)).toEqual([QUESTIONS[0], "You are done for today.", "You are done for today."]);
  await clock.advance(4 * 3_600_000); // Dee's question's wait passes
  await expect.poll(() => bot.dialogs()).toEqual([]);
  expect(toward(DEE)).toEqual([QUESTIONS[0]]);
  const posted = bot.replies().filter((m) => m.type === "stream" && m.subject === "standup 2026-11-30");
  expect(posted.map((m) => m.content)).toEqual([
    "**Mel Member** skips today: on leave.",
    "**Dee Dev** skips today: on leave.",
  ]);
});

// Answers given in a channel topic would be seen by everyone before they are posted.
test("standup said in a channel asks in their direct messages", async ({ runBot, sandbox }) => {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  const toward = towardOf(bot, sandbox);
  expect((await bot.ask(MEL, inTopic("@**Standup** standup"))).content).toBe(SENT);
  await expect.poll(() => toward(MEL)).toEqual([QUESTIONS[0]]);
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  const inChannel = bot.replies().filter((m) => m.type === "stream" && m.subject === "chat");
  expect(inChannel.map((m) => m.content)).toEqual([SENT]);
});

test("standup in a channel while 09:30's questions wait", async ({ runBot, sandbox, clock }) => {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  const toward = towardOf(bot, sandbox);
  await clock.advance(60_000);
  await expect.poll(() => toward(MEL)).toEqual([QUESTIONS[0]]);
  expect((await bot.ask(MEL, inTopic("@**Standup** standup"))).content).toBe(WAITING);
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  expect(toward(MEL)).toEqual([QUESTIONS[0], QUESTIONS[1]]);
  expect(bot.dialogs()).toHaveLength(2); // Mel's and Dee's, one each
  const inChannel = bot.replies().filter((m) => m.type === "stream" && m.subject === "chat");
  expect(inChannel.map((m) => m.content)).toEqual([WAITING]);
});

/** The standup bot, running; what it said to a member; a stop of `downMs` (a deploy, a crash). */
async function standupOn({ runBot, sandbox, clock }: BotFixtures) {
  const bot = await runBot({ bot: standup, name: "standup", email: BOT, settings });
  const toward = towardOf(bot, sandbox);
  const downFor = async (downMs: number) => {
    await bot.stop();
    await clock.advance(downMs);
    await bot.start();
  };
  /** Both members' direct messages from the bot come to hold `mel` and `dee`. */
  const askedBoth = (mel: unknown[], dee = mel) =>
    expect.poll(() => [toward(MEL), toward(DEE)]).toEqual([mel, dee]);
  return { bot, toward, downFor, askedBoth };
}

// A deploy or a crash across the set time: the occurrence missed while the daemon was down is
// run once at its start, the same day.
test("down over 09:30: asked when the daemon is back the same day, once", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward, downFor, askedBoth } = await standupOn({ runBot, sandbox, clock });
  await downFor(10 * 60_000); // back at 09:39
  await askedBoth([QUESTIONS[0]]);
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  await bot.restart();
  expect((await bot.ask(MEL, dm("release notes"))).content).toBe(QUESTIONS[2]);
  expect(toward(DEE)).toEqual([QUESTIONS[0]]);
});

// Down over a whole day's set time: that day is not asked the next day, before its own set time.
test("down from Monday to Tuesday 08:59: asked at Tuesday's set time, not before", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward, downFor, askedBoth } = await standupOn({ runBot, sandbox, clock });
  await downFor(24 * 3_600_000 - 30 * 60_000); // back on Tuesday at 08:59
  // Tuesday 09:00, a second at a time (the store's flushes): Monday's occurrence, missed, is not run.
  for (let i = 0; i < 60; i++) await clock.advance(1_000);
  const report = await bot.ask(OWNER, dm("standup report"));
  expect(report.content).toBe("Standup 2026-12-01:\n* Mel Member: not yet\n* Dee Dev: not yet");
  expect([toward(MEL), toward(DEE)]).toEqual([[], []]);
  await clock.advance(30 * 60_000); // Tuesday 09:30
  await askedBoth([QUESTIONS[0]]);
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  expect(toward(DEE)).toEqual([QUESTIONS[0]]);
});

// Monday's questions wait when the daemon goes down; it is back on Tuesday after 09:30: Monday's
// waits have passed (each told so, for Monday), Tuesday's questions are asked, once each.
test("down from Monday's questions to after Tuesday's set time", async ({ runBot, sandbox, clock }) => {
  const { bot, downFor, askedBoth } = await standupOn({ runBot, sandbox, clock });
  await clock.advance(60_000);
  await askedBoth([QUESTIONS[0]]);
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  await downFor(24 * 3_600_000 + 10 * 60_000); // back on Tuesday at 09:40
  const late = expired("2026-11-30");
  await askedBoth([QUESTIONS[0], QUESTIONS[1], late, QUESTIONS[0]], [QUESTIONS[0], late, QUESTIONS[0]]);
  expect((await bot.ask(MEL, dm("wrote the notes"))).content).toBe(QUESTIONS[1]);
  expect(bot.dialogs()).toHaveLength(2);
});

// Mel skips Monday in a channel while Monday's questions wait in her direct messages; the daemon
// is down from then until Tuesday 08:00: her wait passed meanwhile. She is told nothing (she is
// done for Monday); Dee is told that Monday's questions went unanswered, not that Tuesday's did.
test("down from Monday's questions to Tuesday 08:00: the waits that passed are Monday's", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward, downFor, askedBoth } = await standupOn({ runBot, sandbox, clock });
  await clock.advance(60_000);
  await askedBoth([QUESTIONS[0]]);
  const skip = await bot.ask(MEL, inTopic("@**Standup** standup skip on leave"));
  expect(skip.content).toBe("Skipped for today.");
  await downFor(22.5 * 3_600_000 - 60_000); // back on Tuesday at 08:00
  await expect.poll(() => bot.dialogs()).toEqual([]);
  expect([toward(MEL), toward(DEE)]).toEqual([[QUESTIONS[0]], [QUESTIONS[0], expired("2026-11-30")]]);
  const report = await bot.ask(OWNER, dm("standup report"));
  expect(report.content).toBe("Standup 2026-12-01:\n* Mel Member: not yet\n* Dee Dev: not yet");
});

// Dee says `standup` in her direct messages on Monday at 23:50 while the daemon is down; it is
// back on Tuesday at 08:00 and asks her then (the set is Tuesday's: Tuesday's 09:30 finds it
// waiting). Her wait passes at 12:00: she is told that today's set had no answer, not Monday's.
test("standup said Monday 23:50 while down, asked Tuesday 08:00: its wait is told as Tuesday's", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward } = await standupOn({ runBot, sandbox, clock });
  await bot.stop();
  await clock.advance(14 * 3_600_000 + 21 * 60_000); // Monday 23:50
  bot.post(DEE, dm("standup"));
  await clock.advance(8 * 3_600_000 + 10 * 60_000); // Tuesday 08:00
  await bot.start();
  await expect.poll(() => toward(DEE)).toEqual([QUESTIONS[0]]);
  await clock.advance(90 * 60_000); // Tuesday 09:30: Mel is asked, Dee's set waits
  await expect.poll(() => toward(MEL)).toEqual([QUESTIONS[0]]);
  await clock.advance(150 * 60_000); // Tuesday 12:00
  const noAnswer = "No answer, so no standup from you today. Say `standup` to answer later.";
  await expect.poll(() => toward(DEE)).toEqual([QUESTIONS[0], noAnswer]);
  expect(bot.dialogs()).toHaveLength(1); // Mel's
});

/**
 * Dee's 09:30 questions go unanswered; she says `standup` on Monday at 22:00. Resolves once its
 * first question is asked, with what she was told so far.
 */
async function mondayEvening({ runBot, sandbox, clock }: BotFixtures) {
  const { bot, toward } = await standupOn({ runBot, sandbox, clock });
  const noAnswer = "No answer, so no standup from you today. Say `standup` to answer later.";
  await clock.advance(60_000); // Monday 09:30
  await expect.poll(() => toward(DEE)).toEqual([QUESTIONS[0]]);
  await clock.advance(4 * 3_600_000); // Monday 13:30: her wait passed
  await expect.poll(() => toward(DEE)).toEqual([QUESTIONS[0], noAnswer]);
  await clock.advance(8.5 * 3_600_000); // Monday 22:00
  expect((await bot.ask(DEE, inTopic("@**Standup** standup"))).content).toBe(SENT);
  const told = [QUESTIONS[0], noAnswer, QUESTIONS[0]];
  await expect.poll(() => toward(DEE)).toEqual(told);
  return { bot, toward, told };
}

// Her `skip` to its first question after midnight skips Monday, not Tuesday, whose questions she
// is asked at its set time.
test("a set begun Monday evening, skipped after midnight: Monday is skipped, Tuesday is asked", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward, told } = await mondayEvening({ runBot, sandbox, clock });
  await clock.advance(2 * 3_600_000 + 10 * 60_000); // Tuesday 00:10
  expect((await bot.ask(DEE, dm("skip"))).content).toBe("Skipped for today.");
  const skips = () =>
    sandbox.control
      .messages()
      .filter((m) => String(m.content).includes("skips"))
      .map((m) => [m.topic ?? m.subject, m.content]);
  await expect.poll(skips).toEqual([["standup 2026-11-30", "**Dee Dev** skips 2026-11-30."]]);
  await clock.advance(9 * 3_600_000 + 20 * 60_000); // Tuesday 09:30
  await expect.poll(() => toward(DEE)).toEqual([...told, "Skipped for today.", QUESTIONS[0]]);
});

// The set answered instead, its last answer after midnight: Monday's answers, posted to Monday's
// topic; Tuesday's questions are still asked at its set time.
test("a set begun Monday evening, answered after midnight: posted as Monday's, Tuesday is asked", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward, told } = await mondayEvening({ runBot, sandbox, clock });
  expect((await bot.ask(DEE, dm("the release"))).content).toBe(QUESTIONS[1]);
  expect((await bot.ask(DEE, dm("the notes"))).content).toBe(QUESTIONS[2]);
  await clock.advance(2 * 3_600_000 + 10 * 60_000); // Tuesday 00:10
  const thanks = "Thanks! Posted to #**standups>standup 2026-11-30**.";
  expect((await bot.ask(DEE, dm("none"))).content).toBe(thanks);
  const posts = () =>
    sandbox.control
      .messages()
      .filter((m) => String(m.content).startsWith("**Dee Dev**"))
      .map((m) => m.topic ?? m.subject);
  expect(posts()).toEqual(["standup 2026-11-30"]);
  await clock.advance(9 * 3_600_000 + 20 * 60_000); // Tuesday 09:30
  await expect.poll(() => toward(DEE)).toEqual([...told, ...QUESTIONS.slice(1), thanks, QUESTIONS[0]]);
});

/**
 * Monday evening's set (see mondayEvening), its first question answered; past midnight she skips
 * Tuesday in a channel. Resolves what she was told so far, and her posts (topic, first line).
 */
async function tuesdaySkipped(fixtures: BotFixtures) {
  const { bot, toward, told } = await mondayEvening(fixtures);
  expect((await bot.ask(DEE, dm("the release"))).content).toBe(QUESTIONS[1]);
  await fixtures.clock.advance(2 * 3_600_000 + 5 * 60_000); // Tuesday 00:05
  const skip = await bot.ask(DEE, inTopic("@**Standup** standup skip travelling"));
  expect(skip.content).toBe("Skipped for today.");
  const posts = () =>
    fixtures.sandbox.control
      .messages()
      .filter((m) => String(m.content).startsWith("**Dee Dev**"))
      .map((m) => [m.topic ?? m.subject, String(m.content).split("\n")[0]]);
  return { bot, toward, told: [...told, QUESTIONS[1]], posts };
}

// Tuesday's outcome is not Monday's: Monday's set goes on, its answers posted as Monday's.
test("a set begun Monday evening, Tuesday skipped after midnight: Monday's questions go on", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward, told, posts } = await tuesdaySkipped({ runBot, sandbox, clock });
  expect((await bot.ask(DEE, dm("the notes"))).content).toBe(QUESTIONS[2]);
  const thanks = "Thanks! Posted to #**standups>standup 2026-11-30**.";
  expect((await bot.ask(DEE, dm("none"))).content).toBe(thanks);
  expect(posts()).toEqual([
    ["standup 2026-12-01", "**Dee Dev** skips today: travelling."],
    ["standup 2026-11-30", "**Dee Dev**"],
  ]);
  expect(toward(DEE)).toEqual([...told, QUESTIONS[2], thanks]);
});

// The same, her `skip` to Monday's next question instead: Monday is skipped too.
test("a set begun Monday evening, Tuesday skipped after midnight, then Monday's: both skipped", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, posts } = await tuesdaySkipped({ runBot, sandbox, clock });
  expect((await bot.ask(DEE, dm("skip"))).content).toBe("Skipped for today.");
  await expect.poll(posts).toEqual([
    ["standup 2026-12-01", "**Dee Dev** skips today: travelling."],
    ["standup 2026-11-30", "**Dee Dev** skips 2026-11-30."],
  ]);
});

// A wait so long that a person's questions could still wait at the next set time (that run would
// skip them, and their answer would go on with the earlier day's questions): refused at start.
test("a wait too long for the schedule is a settings problem", async ({ runBot }) => {
  await expect(
    runBot({ bot: standup, name: "standup", email: BOT, settings: { ...settings, wait: "25h" } }),
  ).rejects.toThrow(
    'bots.standup.settings.wait: each of the 3 questions waits up to 25h, so a person\'s questions can take 3d3h, but cron "30 9 * * 1-5" (Europe/Berlin) can run again after 1d: set wait under 8h',
  );
});

/** A time in Berlin, to the minute: `2026-11-30 09:30`. */
const when = (at: number) => new Date(at).toLocaleString("sv-SE", { timeZone: "Europe/Berlin" }).slice(0, 16);

/**
 * The standup bot on a daemon of this process whose dialog writes pass `gate`, on a state folder
 * kept across its stops (a crash: `stop(true)`); what it said to a member, read from the server
 * with the time in Berlin.
 */
async function gatedStandup({ sandbox, clock }: Pick<BotFixtures, "sandbox" | "clock">, gate: StoreGate) {
  const dir = await mkdtemp(join(tmpdir(), "bothost-standup-"));
  let running: Awaited<ReturnType<typeof startInProcessDaemon>> | undefined;
  let files: FileStore | undefined;
  const start = async () => {
    files = await FileStore.open(join(dir, "state"), { now: () => clock.now() });
    running = await startInProcessDaemon(
      sandbox,
      { standup: { email: BOT, definition: standup, settings } },
      { store: gatedBackend(files!, ["standup", "dialogs"], gate), clock, stateDir: join(dir, "daemon") },
    );
  };
  const logged = (part: string) => running?.logged(part) ?? [];
  const stop = async (crash = false) => {
    await running?.stop(crash ? { deadlineMs: 0 } : {});
    running = undefined;
  };
  const botId = sandbox.control.users().find((u) => u.email === BOT)!.user_id;
  const toward = (email: string) => {
    const id = sandbox.control.users().find((u) => u.email === email)!.user_id;
    return sandbox.control
      .messages()
      .filter((m) => m.sender_id === botId && (m.dm_user_ids as number[]).includes(id))
      .map((m) => `${when(Number(m.timestamp) * 1_000)} ${String(m.content)}`);
  };
  /** Whether the set time's run is under way, or was cut short (kept for the next start). */
  const underWay = async () => {
    const job = await files?.namespace("standup").namespace("jobs").get("standup");
    return (job as { running?: unknown } | undefined)?.running !== undefined;
  };
  await start();
  return {
    start,
    stop,
    toward,
    underWay,
    logged,
    close: () => stop(true).then(() => rm(dir, { recursive: true, force: true })),
  };
}

// Monday's set-time run is killed after asking Mel, before Dee (the writes of Mel's question and
// of Dee's dialog held), and the daemon is back on Tuesday before its set time: at 08:00, or at
// 00:30 (Monday still in UTC). The run cut short is taken up again and asks nobody Monday's
// questions on Tuesday; Mel's wait passed (told so). Tuesday's go out at 09:30, once each.
for (const [back, downMs] of [
  ["08:00", 22.5 * 3_600_000],
  ["00:30 (23:30 UTC)", 15 * 3_600_000],
] as const) {
  test(`Monday's run cut short, back on Tuesday at ${back}: nobody asked before Tuesday's set time`, async ({
    sandbox,
    clock,
  }) => {
    const gate = new StoreGate();
    const up = await gatedStandup({ sandbox, clock }, gate);
    try {
      gate.mode = "hang";
      gate.skip = 1; // Mel's dialog begins
      await clock.advance(60_000); // Monday 09:30
      await gate.stoppedAt(2);
      expect(await up.underWay()).toBe(true);
      await expect.poll(() => up.toward(MEL)).toEqual(["2026-11-30 09:30 " + QUESTIONS[0]]);
      await up.stop(true);
      gate.open();
      await clock.advance(downMs);
      await up.start();
      expect(up.logged("cut short before it finished: it runs again")).toHaveLength(1);
      await expect.poll(up.underWay).toBe(false); // the run cut short, taken up again, is over
      await clock.advance(24 * 3_600_000 - downMs); // Tuesday 09:30
      const at = back.slice(0, 5);
      const late = `2026-12-01 ${at} ${expired("2026-11-30")}`;
      const asked = `2026-12-01 09:30 ${QUESTIONS[0]}`;
      await expect
        .poll(() => [up.toward(MEL), up.toward(DEE)])
        .toEqual([[`2026-11-30 09:30 ${QUESTIONS[0]}`, late, asked], [asked]]);
    } finally {
      gate.open();
      await up.close();
    }
  });
}

// A misspelt group: said as the bot starts (its setting, located by path, with the name meant),
// at each set time (nobody asked), and in the report. Before, the standup asked nobody in silence.
test("a group that does not exist is said at start, at the set time and in the report", async ({
  runBot,
  clock,
}) => {
  const bot = await runBot({
    bot: standup,
    name: "standup",
    email: BOT,
    settings: { ...settings, group: "enginering" },
  });
  await expect
    .poll(() => bot.logs().find((l) => String(l.msg).includes("names no user group")))
    .toMatchObject({
      level: 40,
      settings: ["bots.standup.settings.group"],
      msg: 'bots.standup.settings.group: "enginering" (did you mean "engineering"?) names no user group the bot can see: check the spelling (or give the group\'s id).',
    });
  await clock.advance(60_000);
  await expect
    .poll(() => bot.logs().find((l) => String(l.msg).includes("nobody was asked today")))
    .toMatchObject({ level: 40, group: "enginering" });
  const report = await bot.ask(OWNER, dm("standup report"));
  expect(report.content).toBe("Standup 2026-11-30:\n(no user group is named enginering)");
  expect(bot.dialogs()).toEqual([]);
});

// `standup skip [reason]` said in the direct message where the questions wait skips the day
// (shipped-bots.md), rather than being filed as the answer to the question waiting there.
test("standup skip [reason] said where the questions wait skips the day", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const { bot, toward, topic } = await askedAt930({ runBot, sandbox, clock });

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

// `standup report` said where a moderator's own questions wait runs the report, and the question
// waits on: its next message is the answer (before, the command was filed as the answer).
test("standup report said where the questions wait is the command; the question waits on", async ({
  runBot,
  sandbox,
  clock,
}) => {
  // The owner (a moderator) is in the group too, so asked at 09:30 as Mel is.
  await addToGroup(sandbox, "engineering", OWNER, OWNER);
  const { bot, toward } = await askedAt930({ runBot, sandbox, clock }, [OWNER, MEL]);

  const report = await bot.ask(OWNER, dm("standup report"));
  expect(report.content).toBe(
    "Standup 2026-11-30:\n* Olive Owner: not yet\n* Mel Member: not yet\n* Dee Dev: not yet",
  );
  // A member's `standup report` is refused as the command, and their question waits on too.
  expect((await bot.ask(MEL, dm("standup report"))).content).toMatch(/^Sorry, only moderators/);
  expect((await bot.ask(OWNER, dm("reviewed PRs"))).content).toBe(QUESTIONS[1]);
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  expect(toward(OWNER)).toEqual([QUESTIONS[0], report.content, QUESTIONS[1]]);
});

// `standup` said where the person's own question waits asks for the questions under way: the
// question is asked again, and the word is no answer (before, it was posted as one).
test("standup said where the questions wait asks the question again", async ({ runBot, sandbox, clock }) => {
  const { bot, toward, topic } = await askedAt930({ runBot, sandbox, clock });

  expect((await bot.ask(MEL, dm("standup"))).content).toBe(QUESTIONS[0]);
  expect((await bot.ask(MEL, dm("fixed the build"))).content).toBe(QUESTIONS[1]);
  expect((await bot.ask(MEL, dm(" Standup "))).content).toBe(QUESTIONS[1]);
  expect((await bot.ask(MEL, dm("release notes"))).content).toBe(QUESTIONS[2]);
  await bot.ask(MEL, dm("none"));
  expect(toward(MEL)).toEqual([
    QUESTIONS[0],
    QUESTIONS[0],
    QUESTIONS[1],
    QUESTIONS[1],
    QUESTIONS[2],
    expect.stringMatching(/^Thanks!/),
  ]);
  expect(topic()).toEqual([
    `**Mel Member**\n* ${QUESTIONS[0]} fixed the build\n* ${QUESTIONS[1]} release notes\n* ${QUESTIONS[2]} none`,
  ]);
});
