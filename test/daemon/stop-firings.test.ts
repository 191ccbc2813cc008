/**
 * Nothing new starts on a bot once its stop began: a cron job's occurrence that comes while the
 * stop waits for the handlers still running (the shutdown's deadline) does not fire, and an
 * inbound webhook's request is answered 503 without running its handler. A real daemon in this
 * process against the sandbox over HTTP, on the test clock.
 */
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";

const BOT = "slow-bot@sandbox.example";

/** Lets the slow handler return. */
let release: () => void = () => {};
/** Resolves once the slow handler began. */
let began: Promise<void>;
let started: () => void;
/** The occurrences the job ran for. */
const runs: string[] = [];
/** The inbound webhook's runs. */
let hooked = 0;

const slow = defineBot({
  setup(bot) {
    bot.cron("* * * * *", { id: "tick" }, (ctx) => {
      runs.push(ctx.job.scheduledFor.toISOString());
    });
    bot.webhook("hook", { verify: { type: "none" } }, () => {
      hooked++;
    });
    // Holds the stop until released (it ignores its signal).
    bot.on("message", async () => {
      started();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(async () => {
  release();
  await closeGatedDaemon(up);
  up = undefined;
  runs.length = 0;
  hooked = 0;
});

/** The daemon with the slow bot (`began` resolves once its message handler runs). */
async function stopping() {
  began = new Promise((resolve) => {
    started = resolve;
  });
  up = await startGatedDaemon({
    name: "slow",
    email: BOT,
    fullName: "Slow",
    definition: slow,
    extra: "handler_timeout: 1h",
    global: "http:\n  listen: 127.0.0.1:0",
  });
  return up;
}

it("a cron job's occurrence that comes while the stop waits for a handler does not fire", async () => {
  const { clock, running, dm } = await stopping();
  const bot = running.daemon.bots[0]!;
  // Just past a whole minute: the next occurrence is almost a minute away.
  await clock.advance(60_000 - (clock.now() % 60_000) + 1_000);
  const before = bot.scheduler.stats.jobRuns;
  dm("hello");
  await began;
  const stopped = bot.stop(120_000);
  // The next minute passes while the stop waits for the handler (within its 2 min deadline).
  await clock.advance(60_000);
  expect(bot.scheduler.stats.jobRuns).toBe(before);
  expect(bot.scheduler.jobs()).toMatchObject([{ id: "tick", running: false, nextRunAt: undefined }]);
  release();
  await stopped;
  expect(bot.scheduler.stats.jobRuns).toBe(before);
});

it("an inbound webhook's request that comes while the bot stops, or once it stopped, gets 503 and runs no handler", async () => {
  const { running, dm } = await stopping();
  const bot = running.daemon.bots[0]!;
  const post = async () => {
    const res = await request(`${running.daemon.http!.url}/webhooks/slow/hook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    return { status: res.statusCode, body: await res.body.json() };
  };
  expect((await post()).status).toBe(200);
  expect(hooked).toBe(1);
  dm("hello");
  await began;
  const stopped = bot.stop(120_000);
  const refused = { status: 503, body: { error: "bot slow is not running here now; try again" } };
  expect(await post()).toEqual(refused);
  release();
  await stopped;
  expect(await post()).toEqual(refused);
  expect(hooked).toBe(1);
});
