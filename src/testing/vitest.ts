/**
 * bothost/testing/vitest: a vitest fixture (`test.extend`) giving each test a fresh sandbox and a
 * `runBot` whose bots are stopped after the test. vitest is an optional peer dependency: only this
 * entry imports it.
 *
 * @example
 * ```ts
 * import { expect, test } from "bothost/testing/vitest";
 * import echo from "../bots/echo.ts";
 *
 * test("echo answers a direct message", async ({ runBot }) => {
 *   const bot = await runBot({ bot: echo });
 *   const reply = await bot.ask("member@sandbox.example", { type: "direct", to: [bot.email], content: "hi" });
 *   expect(reply.content).toBe("hi");
 * });
 * ```
 */
import { test as base } from "vitest";
import { startSandbox } from "../sandbox/start-sandbox.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { type RunBotOptions, runBot, type TestBot } from "./run-bot.ts";

export { describe, expect } from "vitest";

/** The fixtures: `sandbox`, and `runBot` bound to it. */
export interface BotFixtures {
  sandbox: Sandbox;
  runBot: (options: RunBotOptions) => Promise<TestBot>;
}

export const test = base.extend<BotFixtures>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a test uses from this pattern
  sandbox: async ({}, use) => {
    const sandbox = await startSandbox();
    await use(sandbox);
    await sandbox.stop();
  },
  runBot: async ({ sandbox }, use) => {
    const bots: TestBot[] = [];
    await use(async (options) => {
      const bot = await runBot(sandbox, options);
      bots.push(bot);
      return bot;
    });
    for (const bot of bots) await bot.stop();
  },
});
