/**
 * bothost/testing/vitest: vitest fixtures giving each test a fresh sandbox, a clock to move, and a
 * `runBot` whose bots are stopped after the test. `test` uses the sandbox's default org;
 * `createBotTest({ org, users, clock })` makes a `test` with an org file or inline org, extra
 * people with roles and groups, and a clock starting at a given time (or held between moves).
 * vitest is an optional peer dependency: only this entry imports it.
 *
 * @example
 * ```ts
 * import { createBotTest, expect } from "bothost/testing/vitest";
 * import echo from "../bots/echo.ts";
 *
 * const test = createBotTest({ users: [{ email: "mod@sandbox.example", role: "moderator" }] });
 *
 * test("echo answers a direct message", async ({ runBot }) => {
 *   const bot = await runBot({ bot: echo });
 *   const reply = await bot.ask("mod@sandbox.example", { type: "direct", to: [bot.email], content: "hi" });
 *   expect(reply.content).toBe("hi");
 * });
 * ```
 */
import { test as base } from "vitest";
import type { OrgInput } from "../sandbox/org/schema.ts";
import { startSandbox } from "../sandbox/start-sandbox.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { checkBotTestOptions } from "./kit-arguments.ts";
import { kitFacingSandbox, withoutKitFrames } from "./kit-frames.ts";
import { type RunBotOptions, runBot, type TestBot } from "./run-bot.ts";
import { TestClock, type TestClockOptions } from "./test-clock.ts";
import { type TestUser, testOrg } from "./test-org.ts";

export { describe, expect } from "vitest";
export type { TestUser } from "./test-org.ts";

/** What every test of a {@link createBotTest} starts with. */
export interface BotTestOptions {
  /** An org file (YAML, from the working directory) or an inline org; default the sandbox's small org. */
  org?: string | OrgInput;
  /** People added to the org, with their role, groups and channels. */
  users?: TestUser[];
  /** Where the clock starts (ISO 8601, Date or epoch ms; default now), and whether it is held. */
  clock?: TestClockOptions;
}

/** The fixtures: `sandbox`, `clock` (shared by the sandbox and the bots), and `runBot` bound to both. */
export interface BotFixtures {
  sandbox: Sandbox;
  /** The sandbox's and the bots' time: `await clock.advance(6 * 60_000)` delivers what falls due. */
  clock: TestClock;
  runBot: (options: RunBotOptions) => Promise<TestBot>;
}

/** A vitest `test` whose tests each get a sandbox made from `options`, a clock and `runBot`. */
export function createBotTest(options: BotTestOptions = {}) {
  // Read once, so a mistake in the org file (or the options) fails the file's collection: the org
  // file's with its line and column, the options' with their path.
  let org: OrgInput;
  try {
    checkBotTestOptions(options);
    new TestClock(options.clock);
    org = testOrg(options.org, options.users);
  } catch (err) {
    throw withoutKitFrames(err);
  }
  return base.extend<BotFixtures>({
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a test uses from this pattern
    clock: async ({}, use) => {
      await use(new TestClock(options.clock));
    },
    sandbox: async ({ clock }, use) => {
      const sandbox = await startSandbox({ org, clock });
      await use(kitFacingSandbox(sandbox));
      await sandbox.stop();
    },
    runBot: async ({ sandbox, clock }, use) => {
      const bots: TestBot[] = [];
      await use(async (o) => {
        const bot = await runBot(sandbox, { clock, ...o });
        bots.push(bot);
        return bot;
      });
      for (const bot of bots) await bot.stop({ wipe: true });
    },
  });
}

/** The fixtures over the sandbox's default org (see {@link createBotTest} for options). */
export const test = createBotTest();
