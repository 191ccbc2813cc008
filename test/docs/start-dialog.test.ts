/**
 * The `ctx.startDialog` example of docs/guide/conversations.md, as its reader would run it: the
 * guide's sample is the fixture's text, and the fixture runs in-process against the sandbox over
 * HTTP on a moved clock. At 09:30 in Berlin on a weekday each member of the group is asked.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createBotTest, expect } from "bothost/testing/vitest";
import standup from "../fixtures/bots/start-dialog.ts";
import { repoRoot } from "../support/cli.ts";

const FIXTURE = "test/fixtures/bots/start-dialog.ts";
const ADA = "ada@sandbox.example";
const BO = "bo@sandbox.example";
const MEMBER = "member@sandbox.example";

const test = createBotTest({
  users: [
    { email: ADA, groups: ["standup"] },
    { email: BO, groups: ["standup"] },
  ],
  // Monday 7 January 2030, 09:29 in Berlin.
  clock: { start: "2030-01-07T08:29:00Z" },
});

test("is the bot the guide shows", async () => {
  const guide = await readFile(path.join(repoRoot, "docs/guide/conversations.md"), "utf8");
  const sample = /## Starting a dialog with someone who did not write[\s\S]*?```ts\n([\s\S]*?)```/.exec(
    guide,
  )?.[1];
  expect(sample).toBe(await readFile(path.join(repoRoot, FIXTURE), "utf8"));
});

test("asks each member of the group at 09:30, and takes their answers", async ({ runBot, clock }) => {
  const bot = await runBot({ bot: standup, name: "standup" });
  const before = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
  await bot.handled(before);
  await clock.advance(60_000);
  const toward = (email: string) => (m: { display_recipient: unknown }) =>
    Array.isArray(m.display_recipient) && m.display_recipient.some((r) => r.email === email);
  for (const email of [ADA, BO]) {
    const asked = await bot.nextReply({ after: before, where: toward(email) });
    expect(asked.content).toBe("What did you do yesterday?");
  }
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  expect((await bot.ask(ADA, dm("fixed the build"))).content).toBe("Noted: fixed the build");
  expect((await bot.ask(BO, dm("reviews"))).content).toBe("Noted: reviews");
  // Nobody outside the group was asked: the member's conversation holds no question.
  expect(
    bot
      .replies()
      .filter(toward(MEMBER))
      .map((m) => m.content),
  ).not.toContain("What did you do yesterday?");
});

test("a member deactivated since the bot started is not asked, and leaves no failure behind", async ({
  runBot,
  clock,
  sandbox,
}) => {
  const bot = await runBot({ bot: standup, name: "standup" });
  sandbox.control.setActive(BO, false);
  const before = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
  await bot.handled(before);
  await clock.advance(60_000);
  const toward = (email: string) => (m: { display_recipient: unknown }) =>
    Array.isArray(m.display_recipient) && m.display_recipient.some((r) => r.email === email);
  expect((await bot.nextReply({ after: before, where: toward(ADA) })).content).toBe(
    "What did you do yesterday?",
  );
  await expect.poll(() => bot.dialogs().map((d) => d.userName)).toEqual([expect.stringMatching(/^Ada/i)]);
  // The job ran to its end: no question to Bo failed, nothing was kept to retry.
  expect(bot.replies().filter(toward(BO))).toEqual([]);
  expect(bot.logs().filter((l) => (l.level as number) >= 40)).toEqual([]);
});
