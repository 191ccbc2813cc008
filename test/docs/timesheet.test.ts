/**
 * The back-word example of docs/guide/conversations.md (the `timesheet` command), as its reader
 * would run it: the guide's sample is the fixture's text, run in-process against the sandbox over
 * HTTP. Said again while its second question waits (`commands: true`), the command's own first
 * question is refused with PROMPT_PENDING, which the sample catches to tell the person.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createBotTest, expect } from "bothost/testing/vitest";
import timesheet from "../fixtures/bots/timesheet.ts";
import { repoRoot } from "../support/cli.ts";

const FIXTURE = "test/fixtures/bots/timesheet.ts";
const MEMBER = "member@sandbox.example";

const test = createBotTest();

test("is the bot the guide shows", async () => {
  const guide = await readFile(path.join(repoRoot, "docs/guide/conversations.md"), "utf8");
  // The fenced sample that declares the timesheet command (its text, no fence crossed).
  const fenced = /```ts\n((?:(?!```)[\s\S])*?bot\.command\("timesheet"(?:(?!```)[\s\S])*?)```/;
  const sample = fenced.exec(guide)?.[1];
  expect(sample).toBe(await readFile(path.join(repoRoot, FIXTURE), "utf8"));
});

test("said again while a question waits, it tells the person, and the first dialog goes on", async ({
  runBot,
}) => {
  const bot = await runBot({ bot: timesheet, name: "timesheet" });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
  expect((await bot.ask(MEMBER, dm("timesheet"))).content).toContain("Which project?");
  expect((await bot.ask(MEMBER, dm("web"))).content).toContain("How many hours?");
  expect((await bot.ask(MEMBER, dm("timesheet"))).content).toBe("Your timesheet waits for an answer above.");
  expect((await bot.ask(MEMBER, dm("oops"))).content).toContain("Which project?");
  expect((await bot.ask(MEMBER, dm("api"))).content).toContain("How many hours?");
  expect((await bot.ask(MEMBER, dm("3"))).content).toBe("3 h on api.");
});
