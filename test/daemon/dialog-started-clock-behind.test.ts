/**
 * A dialog the bot starts itself (`ctx.startDialog`) whose first question is stored by the server
 * with its answer lost (a 502 after acting) and no echo: the run again reads the bot's messages
 * back to find it. Its first message is made up here, stamped by this machine's clock; the server
 * stamps the question by its own, which may be behind: the question is found all the same, not
 * asked twice; and a snippet its first run saves with its answer lost is found, not saved twice.
 * A real daemon in this process on a held test clock against the sandbox over HTTP,
 * the sandbox's clock behind the daemon's.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { ECHO_WAIT_MS } from "../../src/effects/local-echo.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";

const orders = defineBot({
  setup(bot) {
    // Starts the dialog and says nothing itself: the question is the first thing the bot posts.
    bot.command("invite", async (ctx) => {
      await ctx.startDialog(ctx.sender!.id, "pick");
    });
    bot.command("pick", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "1h" });
      await ctx.reply(`${size.text}, noted.`);
    });
    bot.command("offer", async (ctx) => {
      await ctx.startDialog(ctx.sender!.id, "keep");
    });
    bot.command("keep", async (ctx) => {
      const saved = await ctx.snippets.create("Order", "A large coffee.");
      await ctx.reply(`Saved ${saved.id} of ${(await ctx.snippets.list()).length}.`);
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

/** The bot's messages, oldest first. */
const said = () => botSaid(up!.sandbox, BOT);

/** The daemon, its sandbox's clock 10 s behind its own, a run failed again after 10 ms. */
async function start(): Promise<TestClock> {
  const clock = new TestClock({ held: true });
  up = await startGatedDaemon({
    name: "orders",
    email: BOT,
    fullName: "Orders",
    definition: orders,
    clock,
    serverBehindMs: 10_000,
    extra: "retries: { attempts: 3, backoff: 10ms }",
  });
  return clock;
}

it("a started dialog's first question stored with its answer lost, the server's clock 10 s behind: the run again finds it, asked once", async () => {
  const clock = await start();
  const { control } = up!.sandbox;
  // The bot's poll waits: the command goes out on it, the polls after it are held (no echo).
  const parked = () => control.queues().some((q) => q.email === BOT && q.parked && q.pending_events === 0);
  await control.waitFor(parked, { timeoutMs: 15_000 });
  control.failNext(1, { status: 502, after: true, paths: [/^\/messages$/], methods: ["POST"] });
  control.delay(600_000, { paths: [/^\/events$/] });
  up!.dm("invite");
  await control.waitFor(() => said().length === 1, { timeoutMs: 15_000 });
  // No echo in its wait: the send fails, and the run again must decide by reading back.
  await expect.poll(() => clock.pendingDelays(), { timeout: 15_000 }).toContain(ECHO_WAIT_MS);
  await clock.advance(ECHO_WAIT_MS);
  // Past the failure stage's pause: the run again reads back, then waits for the answer.
  await expect.poll(() => clock.pendingDelays(), { timeout: 15_000 }).toContain(10);
  await clock.advance(10);
  const bot = up!.running.daemon.bots[0]!;
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  control.delay(0);
  up!.dm("large");
  await control.waitFor(() => said().at(-1) === "large, noted.", { timeoutMs: 15_000 });
  expect(said()).toEqual(["Which size?", "large, noted."]);
});

it("a started dialog's first run saving a snippet, stored with its answer lost, the server's clock 10 s behind: the run again finds it, saved once", async () => {
  const clock = await start();
  const { control } = up!.sandbox;
  control.failNext(1, { status: 502, after: true, paths: [/^\/saved_snippets$/], methods: ["POST"] });
  up!.dm("offer");
  // Past the failure stage's pause: the run again looks for the snippet before it saves one.
  await expect.poll(() => clock.pendingDelays(), { timeout: 15_000 }).toContain(10);
  await clock.advance(10);
  await control.waitFor(() => said().length === 1, { timeoutMs: 15_000 });
  expect(said()).toEqual(["Saved 1 of 1."]);
});
