/**
 * The `handled` and `failed` counts of `bothost status` count messages, each once, by how its
 * handling ended: a dialog's message when its dialog is over (not at each question it waits at),
 * a message whose handler failed once and then succeeded as handled only, one whose handler (or
 * its dialog's later run) failed for good as failed only. Before, a dialog's message counted as
 * handled at each question, and once more at its end, or as both handled and failed when a later
 * run failed for good. A real daemon in this process against the sandbox over HTTP, on the test
 * clock.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "counter-bot@sandbox.example";

/** Runs of `flaky` so far: its first fails. */
let flakyRuns = 0;

const counter = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      if (size.text === "boom") throw new Error("the kitchen caught fire");
      const count = await ctx.prompt("How many?");
      await ctx.reply(`${count.text} × ${size.text}`);
    });
    bot.command("flaky", async (ctx) => {
      if (flakyRuns++ === 0) throw new Error("not this time");
      await ctx.reply("done at last");
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let up: GatedDaemon | undefined;
let running: InProcessDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  flakyRuns = 0;
});

const ENTRY = { name: "counter", email: BOT, fullName: "Counter", definition: counter };

async function start(retries: string) {
  up = await startGatedDaemon({ ...ENTRY, extra: `handler_timeout: 1h\nretries: ${retries}` });
  running = up.running;
  return up.dm;
}

const said = (count: number) => saidAtLeast(up!.sandbox, BOT, count);
/**
 * The counts of messages: a question's wish for new event types renews the queue, whose `gap`
 * event counts as handled too (an event no handler matched).
 */
const counts = () => {
  const { handled, failed, gaps } = running!.daemon.bots[0]!.stats;
  return { handled: handled - gaps, failed };
};
/** Resolves once the dialog waits at a question (its log kept). */
async function waiting() {
  await expect
    .poll(() => running!.daemon.bots[0]!.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
}

/** The member ordered: the dialog waits at its first question. */
async function ordered(dm: (content: string) => number) {
  dm("order");
  await said(1);
  await waiting();
}

it("a dialog answered to its end counts its message once, as handled", async () => {
  const dm = await start("{ attempts: 1 }");
  await ordered(dm);
  dm("large");
  await said(2);
  await waiting();
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
  await expect.poll(counts).toEqual({ handled: 1, failed: 0 });
});

it("a dialog whose later run fails for good counts its message once, as failed", async () => {
  const dm = await start("{ attempts: 1 }");
  await ordered(dm);
  dm("boom");
  await expect.poll(async () => (await running!.daemon.letters.list()).length, { timeout: 15_000 }).toBe(1);
  // A later message answered: the counts have settled.
  dm("hello");
  expect(await said(2)).toEqual(["Which size?", "not a command: hello"]);
  await expect.poll(counts).toEqual({ handled: 1, failed: 1 });
});

it("a message whose handler failed once, then succeeded, counts once, as handled", async () => {
  const dm = await start("{ attempts: 2, backoff: 1s }");
  dm("flaky");
  await expect
    .poll(() => running!.logged("running it again after a pause"), { timeout: 15_000 })
    .toHaveLength(1);
  await up!.clock.advance(2_000);
  expect(await said(1)).toEqual(["done at last"]);
  await expect.poll(counts).toEqual({ handled: 1, failed: 0 });
});
