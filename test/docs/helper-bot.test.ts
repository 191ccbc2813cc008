/**
 * The helper bot of docs/guide/commands.md, as its reader would run it: the guide's sample is the
 * fixture's text, and the fixture runs in-process against the sandbox over HTTP.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { repoRoot } from "../support/cli.ts";

const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";
const FIXTURE = "test/fixtures/bots/helper-bot.ts";

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  sandbox = await startSandbox();
  bot = await runBot(sandbox, { bot: `./${FIXTURE}`, name: "helper" });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = async (from: string, content: string) =>
  (await bot.ask(from, { type: "direct", to: [bot.email], content })).content;

it("is the bot the guide shows, in at most 40 lines", async () => {
  const guide = await readFile(path.join(repoRoot, "docs/guide/commands.md"), "utf8");
  const sample = /## A helper bot[\s\S]*?```ts\n([\s\S]*?)```/.exec(guide)?.[1];
  const fixture = await readFile(path.join(repoRoot, FIXTURE), "utf8");
  expect(sample).toBe(fixture);
  expect(fixture.trimEnd().split("\n").length).toBeLessThanOrEqual(40);
});

it("reminds with validated arguments, counts, refuses purge-stats to members, hearts thanks", async () => {
  expect(await dm(MEMBER, "remind ten tea")).toBe(
    '`remind`: <minutes>: expected a number, got "ten".\nUsage: `remind <minutes> <text...>` (`help remind` for more)',
  );
  expect(await dm(MEMBER, "remind 10 stretch your legs")).toBe("OK, in 10 min.");
  const member = sandbox.control.users().find((u) => u.email === MEMBER)!.user_id;
  expect(sandbox.control.scheduled()).toEqual([
    expect.objectContaining({ content: "Reminder: stretch your legs", to: [member] }),
  ]);
  const thanks = bot.post(MEMBER, { type: "stream", to: "general", topic: "t", content: "@**helper** thanks!" });
  await sandbox.control.waitFor(() =>
    (sandbox.control.messages().find((m) => m.id === thanks)?.reactions as unknown[] | undefined)?.length,
  );
  expect(await dm(MEMBER, "stats")).toBe("1 reminders set, 1 thanks received.");
  expect(await dm(MEMBER, "purge-stats")).toBe(
    "Sorry, only moderators, administrators and owners may run `purge-stats`.",
  );
  expect(await dm(OWNER, "purge-stats")).toBe("Stats reset.");
  expect(await dm(MEMBER, "stats")).toBe("0 reminders set, 0 thanks received.");
  expect(await dm(MEMBER, "stast")).toBe("I don't know the command `stast`. Did you mean `stats`? Say `help` for the list.");
});
