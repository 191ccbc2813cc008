/**
 * Whole bots the guides show, as their reader would run them: each sample's text, written to a
 * module in a folder at the repository's root (so that `import … from "bothost"` resolves as in
 * a project), run in-process against the sandbox over HTTP, answering what the guide says it
 * answers: conversations.md's coffee order, writing-bots.md's barista, commands.md's subcommands.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { BotDefinition } from "bothost";
import type { TestBot } from "bothost/testing";
import { createBotTest, expect } from "bothost/testing/vitest";
import { afterAll } from "vitest";
import { repoRoot } from "../support/cli.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const dir = mkdtempSync(path.join(repoRoot, ".guide-tests-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first TypeScript sample after `heading` in the guide `file`, loaded as a module. */
async function sample(file: string, heading: string): Promise<BotDefinition<never>> {
  const text = readFileSync(path.join(repoRoot, "docs/guide", file), "utf8");
  const code = /```ts\n([\s\S]*?)```/.exec(text.slice(text.indexOf(heading)))?.[1];
  if (code === undefined) throw new Error(`${file}: no sample after ${heading}`);
  const module = path.join(dir, `${file.replace(".md", "")}-${text.indexOf(heading)}.ts`);
  writeFileSync(module, code);
  return ((await import(pathToFileURL(module).href)) as { default: BotDefinition<never> }).default;
}

const order = await sample("conversations.md", "# Conversations");
const barista = await sample("writing-bots.md", "## Commands and messages addressed to the bot");
const standup = await sample("commands.md", "## Subcommands");

const test = createBotTest();

/** What the bot answers `content` said to it in a direct message by `from` (the member unless given). */
const saying =
  (bot: TestBot) =>
  async (content: string, from = MEMBER): Promise<string> =>
    (await bot.ask(from, { type: "direct", to: [bot.email], content })).content;

test("conversations.md: the coffee order asks, refuses with the schema's reason, and answers", async ({
  runBot,
}) => {
  const bot = await runBot({ bot: order, name: "barista" });
  const say = saying(bot);
  expect(await say("order")).toBe("Which size: small or large?");
  expect(await say("medium")).toBe(
    "I could not use that: expected one of small, large. Which size: small or large?",
  );
  expect(await say("small")).toBe("How many?");
  expect(await say("12")).toBe("I could not use that: expected at most 9. How many?");
  expect(await say("3")).toBe("3 × small coming up.");
});

test("conversations.md: the coffee order's timeout branch", async ({ runBot, clock }) => {
  const bot = await runBot({ bot: order, name: "barista" });
  const asked = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "order" });
  await bot.handled(asked);
  await clock.advance(11 * 60_000);
  expect((await bot.nextReply({ after: asked + 1 })).content).toBe(
    "No answer, so no coffee for now. Ask again any time.",
  );
});

test("writing-bots.md: the barista's command, its usage, and its own answer", async ({ runBot }) => {
  const bot = await runBot({ bot: barista, name: "barista" });
  const say = saying(bot);
  expect(await say("order large")).toBe("One large coffee for Mel Member.");
  expect(await say("order huge")).toBe(
    '`order`: <size>: expected one of small, large, got "huge".\nUsage: `order <size>` (`help order` for more)',
  );
  expect(await say("hello")).toBe('You said "hello". Try `help`.');
  expect(await say("help")).toContain("* `order <size>`: order a coffee");
  const mention = await bot.ask(MEMBER, {
    type: "channel",
    to: "general",
    topic: "coffee",
    content: "@**barista** order large",
  });
  expect(mention.content).toBe("One large coffee for Mel Member.");
});

test("commands.md: subcommands, their usage errors and their own allow", async ({ runBot }) => {
  const bot = await runBot({ bot: standup, name: "standup" });
  const say = saying(bot);
  expect(await say("standup skip on holiday")).toBe("Skipped: on holiday.");
  expect(await say("standup")).toBe("First question: what did you do yesterday?");
  expect(await say("standup skp")).toMatch(
    /^`standup`: "standup" has no subcommand "skp" \(did you mean "standup skip"\?\)\./,
  );
  expect(await say("standup report")).toBe(
    "Sorry, only moderators, administrators and owners may run `standup report`.",
  );
  expect(await say("standup report nine", OWNER)).toBe(
    '`standup report`: <days>: expected a number, got "nine".\nUsage: `standup report [days]` (`help standup report` for more)',
  );
  expect(await say("standup report", OWNER)).toBe("The last 1 day(s): …");
});
