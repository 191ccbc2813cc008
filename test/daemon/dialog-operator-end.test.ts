/**
 * An operator's end (`bothost dialogs end`, through the admin desk) racing the run an answer
 * started: ended during the pause before a failed run's retry, the handler does not run again and
 * no dead letter is kept; ended while the dialog's last run is under way, that run's `ctx.state`
 * writes are not kept. And two ends of one dialog at once: one ends it, its person told once. A real daemon in this process against the sandbox over HTTP, on the test
 * clock; every check is of what the person saw, once a later message was answered.
 */
import { rm } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { narrowExcludes } from "../../src/daemon/stranded-dialogs.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import type { TestClock } from "../../src/testing/test-clock.ts";
import { deferred } from "../support/deferred.ts";
import { type GatedDaemon, type GatedDaemonOptions, startGatedDaemon } from "../support/gated-daemon.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";
const NOTE = "An operator ended this conversation.";

/** How many runs of `order` after its first answer still fail. */
let failing = 0;
/** Holds the last run of `tally` (after its answer, before its state write). */
let slow = deferred();

const orders = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      if (failing > 0) {
        failing--;
        throw new Error("the kitchen did not answer");
      }
      await ctx.reply(`${size.text}, noted.`);
      const count = await ctx.prompt("How many?");
      await ctx.reply(`${count.text} × ${size.text}`);
    });
    bot.command("tally", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await slow.promise;
      await ctx.state.update<number>("orders", (n) => (n ?? 0) + 1);
      await ctx.reply(`One ${size.text}.`);
    });
    bot.command("orders", async (ctx) =>
      ctx.reply(`orders: ${(await ctx.state.get<number>("orders")) ?? 0}`),
    );
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
let dir: string | undefined;
let clock: TestClock;
afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  failing = 0;
});

/** Everything the bot said, once it said `count` things. */
const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

let up: GatedDaemon;
/** The bot entry's YAML: a case narrows it before a restart. */
let options: GatedDaemonOptions;

async function start() {
  options = {
    name: "orders",
    email: BOT,
    fullName: "Orders",
    definition: orders,
    extra: "handler_timeout: 1h",
  };
  up = await startGatedDaemon(options);
  ({ sandbox, running, clock, dir } = up);
  return up.dm;
}

/** The one open dialog, once it waits at its question (its log kept). */
async function waiting() {
  const bot = running!.daemon.bots[0]!;
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  return bot.dialogs()[0]!;
}

const end = (id: string) => dialogDesk(running!.daemon.bots).endDialog("orders", id, NOTE);

it("ended during the pause before a failed run's retry: the handler does not run again, no dead letter", async () => {
  failing = 1;
  const dm = await start();
  dm("order");
  expect(await said(1)).toEqual(["Which size?"]);
  const dialog = await waiting();
  dm("large");
  await expect.poll(() => running!.logged("running it again after a pause")).toHaveLength(1);
  // The operator is told a run was under way: the note comes once it is over.
  expect(await end(dialog.id)).toEqual({ underWay: true });
  // Past every pause the retries would take (2 s, 4 s, 8 s, 16 s).
  for (let i = 0; i < 60; i++) await clock.advance(1_000);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: 2"]);
  expect(await running!.daemon.letters.list()).toEqual([]);
  expect(running!.logged("handler failed").map((l) => l.msg)).toEqual([
    "handler failed",
    "handler failed; running it again after a pause",
  ]);
  expect(running!.logged("ended while its run was under way")).toHaveLength(1);
});

it("ended while the dialog's last run is under way: that run's state writes are not kept", async () => {
  slow = deferred();
  const dm = await start();
  dm("tally");
  expect(await said(1)).toEqual(["Which size?"]);
  const dialog = await waiting();
  dm("large");
  // The run that took "large" is under way (no deadline: being handled).
  await expect.poll(() => running!.daemon.bots[0]!.dialogs().map((d) => d.deadline)).toEqual([undefined]);
  expect(await end(dialog.id)).toEqual({ underWay: true });
  slow.resolve();
  dm("orders");
  expect(await said(4)).toEqual(["Which size?", "One large.", NOTE, "orders: 0"]);
});

it("two ends of one dialog at once (two operators, a retried request): one ends it, the person is told once", async () => {
  const dm = await start();
  dm("order");
  expect(await said(1)).toEqual(["Which size?"]);
  const dialog = await waiting();
  // On the test clock both ends are made in the same millisecond, as two requests can be.
  const ends = await Promise.allSettled([end(dialog.id), end(dialog.id)]);
  expect(ends.map((e) => e.status).sort()).toEqual(["fulfilled", "rejected"]);
  expect(ends.find((e) => e.status === "rejected")).toMatchObject({ reason: { code: "UNKNOWN_DIALOG" } });
  // Waiting at its question, no run under way.
  expect(ends.find((e) => e.status === "fulfilled")).toEqual({ status: "fulfilled", value: {} });
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
});

it("a restart whose narrow leaves out a waiting dialog's conversation warns of it once, lists it so, and ends nothing", async () => {
  const dm = await start();
  dm("order");
  expect(await said(1)).toEqual(["Which size?"]);
  const dialog = await waiting();
  running = await up.restart(() => {
    options.extra = "handler_timeout: 1h\nnarrow: [[channel, general]]";
  });
  const bot = running.daemon.bots[0]!;
  await expect.poll(() => bot.dialogs().map((d) => d.id), { timeout: 15_000 }).toEqual([dialog.id]);
  // The answer in the direct message does not reach the bot under that narrow.
  dm("large");
  const warned = running.logged("does not receive");
  expect(warned.map((l) => [l.level, l.dialog, l.where, l.narrow])).toEqual([
    [40, dialog.id, "direct message", "[channel, general]"],
  ]);
  expect(warned[0]!.msg).toContain(`bothost dialogs end orders ${dialog.id}`);
  // One line, naming the bot once (a key given twice is a JSON line some log readers refuse).
  const line = running
    .logText()
    .split("\n")
    .find((l) => l.includes("does not receive"));
  expect(line?.match(/"bot":/g)).toEqual(['"bot":']);
  expect(bot.dialogs().map((d) => d.outsideNarrow)).toEqual(["[channel, general]"]);
  // Not ended: the operator ends it, the person told.
  await end(dialog.id);
  expect(await said(2)).toEqual(["Which size?", NOTE]);
});

it("the narrow's terms against a dialog's place: only what surely keeps its answers out", () => {
  const standup = { conversation: "channel:7:standup", where: "#Team > Standup" };
  const dmPlace = { conversation: "dm:3,9", where: "direct message" };
  const names = (id: number) => (id === 7 ? "Team" : undefined);
  const excludes = (narrow: [string, string][], place = standup, name = names) =>
    narrowExcludes(narrow, place, name);
  expect(excludes([["channel", "team"]])).toBeUndefined();
  expect(excludes([["stream", "general"]])).toBe("[stream, general]");
  expect(excludes([["channel", "7"]])).toBeUndefined();
  expect(excludes([["channel", "8"]])).toBe("[channel, 8]");
  expect(excludes([["topic", "STANDUP"]])).toBeUndefined();
  expect(
    excludes([
      ["channel", "team"],
      ["topic", "help"],
    ]),
  ).toBe("[topic, help]");
  // The channel's name unknown to the bot: read from the place's label.
  expect(excludes([["channel", "general"]], standup, () => undefined)).toBe("[channel, general]");
  expect(excludes([["is", "dm"]])).toBe("[is, dm]");
  expect(excludes([["is", "dm"]], dmPlace)).toBeUndefined();
  expect(excludes([["topic", "help"]], dmPlace)).toBe("[topic, help]");
  // A sender or mention term depends on each answer: not told.
  expect(excludes([["sender", "ann@example.org"]], dmPlace)).toBeUndefined();
  expect(excludes([["is", "mentioned"]])).toBeUndefined();
});
