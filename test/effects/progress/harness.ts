/**
 * What the progress tests share: a bot whose `go` command streams its run's feed into a
 * `ctx.progress` and finishes it, the sandbox it runs against on a test clock, and the cleanup
 * after each test (importing this module registers it).
 */
import { afterEach } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import type { ProgressHandle, ProgressResult } from "../../../src/effects/progress/types.ts";
import type { ProgressOptions } from "../../../src/index.ts";
import type { ResponseRecord } from "../../../src/sandbox/http/server.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { Feed } from "./feed.ts";

/** What a run does between its feed's end and `done()` (throw, say), given its signal. */
type BeforeDone = (progress: ProgressHandle, signal: AbortSignal) => Promise<void>;

/** The feed each run of the handler streams, in order (a run past them gets one that never ends). */
export const feeds: Feed[] = [];
/** What each run's `done()` resolved with. */
export const results: ProgressResult[] = [];
/** The handler's runs so far. */
export let runs = 0;
let options: ProgressOptions = {};
let beforeDone: BeforeDone | undefined;

/** The feeds the handler's next runs stream (`n`: that many new ones), its options, and what it does before `done()`. */
export function nextRuns(n: number | Feed[], given: ProgressOptions = {}, before?: BeforeDone): void {
  feeds.splice(0, feeds.length, ...(typeof n === "number" ? Array.from({ length: n }, () => new Feed()) : n));
  [runs, options, beforeDone, whole] = [0, given, before, false];
}

/** Whether the handler shows its text with `update(text so far)` instead of `stream()`. */
let whole = false;
export const showWhole = () => {
  whole = true;
};

const streamer = defineBot({
  setup(bot) {
    bot.command("go", async (ctx) => {
      const feed = feeds[runs++] ?? new Feed();
      const progress = await ctx.progress("Working…", options);
      if (whole) {
        let text = "";
        for await (const chunk of feed) {
          text += chunk;
          progress.update(text);
        }
      } else await progress.stream(feed);
      await beforeDone?.(progress, ctx.signal);
      results.push(await progress.done());
    });
  },
});

/** Called after each of the sandbox's answers (a test arms a fault at a given step with it). */
let onResponse: ((record: ResponseRecord) => void) | undefined;
export const watchResponses = (watch: typeof onResponse) => {
  onResponse = watch;
};

export let clock: TestClock;
export let sandbox: Sandbox;
export let bot: TestBot;
afterEach(async () => {
  for (const feed of feeds) feed.end();
  await bot?.stop();
  await sandbox?.stop();
  nextRuns([]);
  results.length = 0;
  onResponse = undefined;
});

/** A sandbox (its realm's settings changed by `realm`) and the bot (with `config`) on a new test clock. */
export async function start(
  realm: Record<string, unknown> = {},
  config = "handler_timeout: 1h",
  held = false,
): Promise<void> {
  clock = new TestClock({ held });
  const org = defaultOrg();
  sandbox = await startSandbox({
    clock,
    org: { ...org, realm: { ...org.realm, ...realm } },
    onResponse: (record) => onResponse?.(record),
  });
  bot = await runBot(sandbox, { bot: streamer, name: "streamer", clock, config });
}

/**
 * {@link start} on a held clock: it stands still between advances, so a time limit, a retry's
 * pause or an edit's turn passes only where the test moves it.
 */
export const startHeld = (realm: Record<string, unknown> = {}, config?: string) => start(realm, config, true);

/** A short real pause: the work a clock's advance started reaches its next wait. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
export const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
