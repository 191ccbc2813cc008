/**
 * A prompt's deadline is kept on the daemon's clock, and the server stamps each message by its
 * own. With the two clocks apart, an answer is late only when both say so: it came after the
 * deadline by the daemon's clock and was stamped after it by the server's. A person who answers
 * before the deadline the bot keeps is not told the prompt timed out because the server's clock
 * runs ahead, nor because it waited in its conversation's queue (behind a slow run there) until
 * the deadline passed; one caught up after a restart, stamped after the deadline, is late as before. A
 * real daemon in this process on a held test clock against the sandbox over HTTP, the sandbox's
 * clock ahead of (or behind) the daemon's.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";
const MINUTE = 60_000;

let helpStarted = false;
/** Who decides a deploy (set once the users exist). */
let ownerId = -1;
let releaseHelp: (() => void) | undefined;

const orders = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "10m" }).catch(() => undefined);
      await ctx.reply(size === undefined ? "Timed out." : `${size.text}, noted.`);
    });
    // A command the waiting question lets through: held by the test, it holds the conversation's queue.
    bot.command("help", async (ctx) => {
      helpStarted = true;
      await new Promise<void>((resolve) => {
        releaseHelp = resolve;
      });
      await ctx.reply("Sizes: small, large.");
    });
    // A question for others (the owner decides), asked in the topic the request came from.
    bot.command("deploy", async (ctx) => {
      const decision = await ctx
        .prompt("Deploy?", {
          from: [ownerId],
          timeout: "10m",
          choices: { approve: "check", reject: "cross_mark" },
        })
        .catch(() => undefined);
      await ctx.reply(decision === undefined ? "Expired." : `${decision.value} by ${decision.by.name}`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let up: GatedDaemon | undefined;
afterEach(() => {
  releaseHelp?.();
  return closeGatedDaemon(up);
});

const said = () => botSaid(up!.sandbox, BOT);
/** The first line of each (a question's choices follow it). */
const firstLines = () => said().map((s) => s.split("\n")[0]);

/** The daemon on a held clock, the sandbox's clock `behindMs` behind, the bot in `general`. */
async function started(behindMs: number, extra?: string) {
  const clock = new TestClock({ held: true });
  up = await startGatedDaemon({
    name: "orders",
    email: BOT,
    fullName: "Orders",
    definition: orders,
    clock,
    serverBehindMs: behindMs,
    channels: ["general"],
    ...(extra ? { extra } : {}),
  });
  return { clock, bot: up.running.daemon.bots[0]! };
}

/** The daemon asked "Which size?" (deadline in 10 minutes), the sandbox's clock `behindMs` behind. */
async function asked(behindMs: number, extra?: string) {
  const { clock, bot } = await started(behindMs, extra);
  up!.dm("order");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  return { clock, bot };
}

it("the server's clock 2 minutes ahead: an answer 1 minute before the deadline the bot keeps is the answer", async () => {
  const { clock } = await asked(-2 * MINUTE);
  await clock.advance(9 * MINUTE);
  // Stamped 1 minute after the deadline by the server's clock; 1 minute before it by the daemon's.
  up!.dm("large");
  await expect.poll(said, { timeout: 15_000 }).toEqual(["Which size?", "large, noted."]);
});

it("the server's clock 2 minutes ahead: a later message after the deadline passed is an ordinary one", async () => {
  const { clock, bot } = await asked(-2 * MINUTE);
  await clock.advance(10 * MINUTE + 1_000);
  await expect.poll(said, { timeout: 15_000 }).toEqual(["Which size?", "Timed out."]);
  await expect.poll(() => bot.dialogs()).toEqual([]); // ended once the run that said so returns
  up!.dm("large");
  await expect.poll(said, { timeout: 15_000 }).toEqual(["Which size?", "Timed out.", "not a command: large"]);
});

it("an answer sent while the daemon was down, stamped after the deadline, is late at the next start", async () => {
  await asked(0);
  await up!.restart(async () => {
    await up!.clock.advance(11 * MINUTE);
    up!.dm("large");
  });
  await expect.poll(said, { timeout: 15_000 }).toEqual(["Which size?", "Timed out.", "not a command: large"]);
});

it("the server's clock 2 minutes behind: an answer the server stamps before the deadline, caught up after it, is the answer", async () => {
  await asked(2 * MINUTE);
  await up!.restart(async () => {
    // 11 minutes by the daemon's clock: the server stamps the answer at 9.
    await up!.clock.advance(11 * MINUTE);
    up!.dm("large");
  });
  await expect.poll(said, { timeout: 15_000 }).toEqual(["Which size?", "large, noted."]);
});

it("the server's clock 2 minutes ahead: an answer that reached the bot in time, matched after the deadline behind a slow run, is the answer", async () => {
  const { clock, bot } = await asked(-2 * MINUTE, "handler_timeout: 1h");
  await clock.advance(8 * MINUTE);
  up!.dm("help");
  await expect.poll(() => helpStarted, { timeout: 15_000 }).toBe(true);
  // 8.5 minutes by the daemon's clock, 10.5 by the server's: it reaches the bot in time.
  await clock.advance(MINUTE / 2);
  const before = bot.stats.received;
  up!.dm("large");
  await expect.poll(() => bot.stats.received, { timeout: 15_000 }).toBe(before + 1);
  // The deadline passes by the daemon's clock while the answer waits behind "help".
  await clock.advance(2 * MINUTE);
  releaseHelp!();
  await expect
    .poll(said, { timeout: 15_000 })
    .toEqual(["Which size?", "Sizes: small, large.", "large, noted."]);
});

it("the server's clock 2 minutes ahead: another person's message in the topic of a question for others, before the deadline the bot keeps, is an ordinary one; the question still waits", async () => {
  const { clock, bot } = await started(-2 * MINUTE);
  ownerId = up!.sandbox.control.users().find((u) => u.email === "owner@sandbox.example")!.user_id;
  const say = (email: string, content: string) =>
    up!.sandbox.control.sendAs(email, { type: "stream", to: "general", topic: "deploys", content });
  say("member@sandbox.example", "@**Orders** deploy");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  await clock.advance(9 * MINUTE);
  // Stamped after the deadline by the server's clock; before it by the daemon's.
  say("member@sandbox.example", "hello");
  await expect.poll(firstLines, { timeout: 15_000 }).toEqual(["Deploy?", "not a command: hello"]);
  expect(bot.dialogs()).toHaveLength(1);
  say("owner@sandbox.example", "approve");
  await expect
    .poll(firstLines, { timeout: 15_000 })
    .toEqual(["Deploy?", "not a command: hello", "approve by Olive Owner"]);
});
