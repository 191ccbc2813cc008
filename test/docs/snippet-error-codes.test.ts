/**
 * The codes `ctx.snippets` throws for a caller's mistake, met by a bot on the sandbox over HTTP,
 * are each listed in docs/reference/errors.md.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/index.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { repoRoot } from "../support/cli.ts";

const MEMBER = "member@sandbox.example";

const codeOf = async (call: () => Promise<unknown>): Promise<string> => {
  try {
    await call();
    return "none";
  } catch (err) {
    return String((err as { code?: unknown }).code);
  }
};

const snippetBot = defineBot({
  setup(bot) {
    bot.on("message", { direct: true }, async (ctx) => {
      const blank = await codeOf(() => ctx.snippets.ensure("", "text"));
      const missing = await codeOf(() => ctx.snippets.update("No such title", { content: "x" }));
      await ctx.reply(`${blank} ${missing}`);
    });
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  sandbox = await startSandbox();
  bot = await runBot(sandbox, { bot: snippetBot, name: "snippets" });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

it("lists in the error reference each code a snippet call throws", async () => {
  const answer = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "go" });
  const codes = answer.content
    .replace(/<[^>]+>/g, "")
    .trim()
    .split(" ");
  expect(codes).toEqual(["SNIPPET_INVALID", "SNIPPET_NOT_FOUND"]);
  const reference = await readFile(path.join(repoRoot, "docs/reference/errors.md"), "utf8");
  for (const code of codes) expect(reference).toMatch(new RegExp(`^\\| \`${code}\` \\|`, "m"));
});
