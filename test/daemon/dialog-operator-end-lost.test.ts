/**
 * An operator's end (`bothost dialogs end`, through the admin desk) whose write lands but whose
 * reply is lost: tried again, the same end entry is found made in the dialog's log, and the end is
 * finished once: the operator is told it ended, the dialog is no longer listed, and the person is
 * told the note once. And an end left in doubt (it landed, every later try was refused, the
 * operator told it failed): run again, it repeats the same end and finishes it once. Else the
 * next thing that touches the dialog settles it by its log: the person's next message there or
 * its deadline (refused as ended: the end landed, the note is said once and the message is an
 * ordinary one; taken: it did not, and the dialog goes on), a run under way before the next thing
 * it says (its header read: ended, nothing is sent, be it a reply, a refused answer asked again or
 * a question), or the bot's next start, also a new
 * daemon's on the same store (the ended header keeps the note until it is said: said once, before
 * what is caught up). A real daemon in this process against the sandbox over HTTP, on the test
 * clock; the dialogs' writes pass a gate.
 */
import { rm } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { ENDED_MEANWHILE } from "../../src/pipeline/dialogs/dialog-ends.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import type { TestClock } from "../../src/testing/test-clock.ts";
import { deferred } from "../support/deferred.ts";
import { startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";
const NOTE = "An operator ended this conversation.";

/** Set by a test: the run that took the first answer waits on it before asking again. */
let slow: { promise: Promise<void>; resolve: () => void } | undefined;

const orders = defineBot({
  setup(bot) {
    bot.command("pick", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "1h" });
      await slow?.promise;
      const count = await ctx.prompt("How many?");
      await ctx.reply(`${count.text} × ${size.text}`);
    });
    bot.command("note", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "1h" });
      await slow?.promise;
      await ctx.reply(`${size.text}, noted.`);
      await ctx.prompt("How many?");
    });
    bot.command("count", async (ctx) => {
      await slow?.promise;
      const count = await ctx.prompt("How many?", { timeout: "1h", schema: z.coerce.number().int() });
      await ctx.reply(`${count.value} coffees.`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
let dir: string | undefined;
let clock: TestClock;
let restarted: (between?: () => unknown) => Promise<InProcessDaemon>;
afterEach(async () => {
  slow = undefined;
  await running?.stop();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Everything the bot said, once it said `count` things. */
const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

/** The daemon on a store whose dialog writes pass `gate`; resolves a direct message to the bot. */
async function start(gate: StoreGate, serverBehindMs?: number) {
  const up = await startGatedDaemon({
    name: "orders",
    email: BOT,
    fullName: "Orders",
    definition: orders,
    extra: "handler_timeout: 1h",
    gate,
    ...(serverBehindMs ? { serverBehindMs } : {}),
  });
  ({ sandbox, running, clock, dir } = up);
  restarted = up.restart;
  return up.dm;
}

/** The bot's one dialog, once it waits at its question (its log kept). */
async function waiting() {
  const bot = running!.daemon.bots[0]!;
  await expect.poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  return bot.dialogs()[0]!;
}

/** The daemon on a gated store, its bot's one dialog (begun by `command`) waiting at its first question. */
async function asked(command = "pick", question = "Which size?", serverBehindMs?: number) {
  const gate = new StoreGate();
  const dm = await start(gate, serverBehindMs);
  const bot = running!.daemon.bots[0]!;
  dm(command);
  expect(await said(1)).toEqual([question]);
  return { gate, dm, bot, dialog: await waiting() };
}

const end = (id: string) => dialogDesk(running!.daemon.bots).endDialog("orders", id, NOTE);

it("an operator's end that landed with its reply lost is found made: ended once, the person told once", async () => {
  const { gate, dm, bot, dialog } = await asked();
  gate.mode = "lose";
  await end(dialog.id);
  expect(gate.stopped).toBe(1);
  expect(running!.logged("the state store failed a dialog's write; trying again")).toHaveLength(1);
  expect(bot.dialogs()).toEqual([]);
  // Ended: a second end finds no dialog, and tells nobody anything.
  await expect(end(dialog.id)).rejects.toMatchObject({ code: "UNKNOWN_DIALOG" });
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  expect(bot.dialogs()).toEqual([]);
});

/** Ends dialog `id` through a write that lands and loses its reply, every try after it refused. */
async function endInDoubt(gate: StoreGate, id: string): Promise<void> {
  gate.mode = "lose";
  const ending = end(id);
  // The end's write has landed (its reply is being lost): the tries after it are refused.
  await gate.stoppedAt(1);
  gate.mode = "fail";
  await expect(ending).rejects.toThrow(/refused a write/);
  expect(gate.stopped).toBe(4);
  gate.open();
}

it("an end left in doubt, run again by the operator, repeats the same end: finished once, the note said once", async () => {
  const { gate, dm, bot, dialog } = await asked();
  await endInDoubt(gate, dialog.id);
  await end(dialog.id);
  expect(bot.dialogs()).toEqual([]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
});

it("an end left in doubt that landed, then the person writes: the note said once, the message an ordinary one", async () => {
  const { gate, dm, bot, dialog } = await asked();
  await endInDoubt(gate, dialog.id);
  // Told it failed, the operator sees it listed still: the process cannot tell it ended.
  expect(bot.dialogs().map((d) => d.id)).toEqual([dialog.id]);
  // Each write to the dialogs' log from now on is counted.
  let writes = 0;
  const pass = gate.pass.bind(gate);
  gate.pass = (write) => {
    writes++;
    return pass(write);
  };
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  expect(bot.dialogs()).toEqual([]);
  // Past the question's deadline: nothing waits for it, so nothing is written for it.
  await clock.advance(2 * 3_600_000);
  dm("2");
  expect(await said(4)).toEqual(["Which size?", NOTE, "not a command: large", "not a command: 2"]);
  // The answer's append (refused as ended) and the note's, said, cleared from the header.
  expect(writes).toBe(2);
  expect(bot.dialogs()).toEqual([]);
  // Settled: the operator's end run again finds no dialog, and the note is not said again.
  await expect(end(dialog.id)).rejects.toMatchObject({ code: "UNKNOWN_DIALOG" });
  dm("3");
  const after = ["not a command: large", "not a command: 2", "not a command: 3"];
  expect(await said(5)).toEqual(["Which size?", NOTE, ...after]);
});

it("an end left in doubt that landed, then the question's deadline passes: the note said once", async () => {
  const { gate, dm, bot, dialog } = await asked();
  await endInDoubt(gate, dialog.id);
  await clock.advance(2 * 3_600_000);
  expect(await said(2)).toEqual(["Which size?", NOTE]);
  expect(bot.dialogs()).toEqual([]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  await expect(end(dialog.id)).rejects.toMatchObject({ code: "UNKNOWN_DIALOG" });
});

it("an end left in doubt that did not land, then the person writes: the dialog goes on as it was", async () => {
  const { gate, dm, bot, dialog } = await asked();
  gate.mode = "fail";
  await expect(end(dialog.id)).rejects.toThrow(/refused a write/);
  expect(gate.stopped).toBe(4);
  gate.open();
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
  // Run again, the end ends the dialog at the question it is at now: the note said once.
  await end(dialog.id);
  expect(await said(3)).toEqual(["Which size?", "How many?", NOTE]);
  dm("2");
  expect(await said(4)).toEqual(["Which size?", "How many?", NOTE, "not a command: 2"]);
  expect(bot.dialogs()).toEqual([]);
});

it("an end left in doubt that landed, then the bot starts again: the note said once at the start", async () => {
  const { gate, dm, bot, dialog } = await asked();
  await endInDoubt(gate, dialog.id);
  await bot.stop(1_000);
  await bot.start();
  expect(await said(2)).toEqual(["Which size?", NOTE]);
  expect(bot.dialogs()).toEqual([]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
});

it("an end left in doubt that landed while a run is under way: the run asks nothing more, the note said once", async () => {
  slow = deferred();
  const { gate, dm, bot, dialog } = await asked();
  dm("large");
  // The run that took "large" waits on slow code.
  await expect.poll(() => bot.dialogs().map((d) => d.deadline)).toEqual([undefined]);
  await endInDoubt(gate, dialog.id);
  slow.resolve();
  // Its next question reads the header first: ended, it is not sent.
  expect(await said(2)).toEqual(["Which size?", NOTE]);
  expect(running!.logged(ENDED_MEANWHILE)).toHaveLength(1);
  expect(bot.dialogs()).toEqual([]);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: 2"]);
});

it.each([
  ["the handler's own reply before its next question", "note", "Which size?", "large"],
  ["a refused answer's asking again", "count", "How many?", "lots"],
])(
  "an end left in doubt that landed while a run is under way: %s waits for the header; the note, nothing after",
  async (_, command, question, answer) => {
    const { gate, dm, bot, dialog } = await asked(command, question);
    slow = deferred();
    dm(answer);
    await expect.poll(() => bot.dialogs().map((d) => d.deadline)).toEqual([undefined]);
    await endInDoubt(gate, dialog.id);
    slow.resolve();
    // Its next send reads the header first: ended, nothing is sent.
    expect(await said(2)).toEqual([question, NOTE]);
    expect(running!.logged(ENDED_MEANWHILE)).toHaveLength(1);
    expect(bot.dialogs()).toEqual([]);
    dm("2");
    expect(await said(3)).toEqual([question, NOTE, "not a command: 2"]);
  },
);

it("an end left in doubt that did not land while a run is under way: the run says and asks on, nothing said", async () => {
  slow = deferred();
  const { gate, dm, bot } = await asked("note");
  dm("large");
  await expect.poll(() => bot.dialogs().map((d) => d.deadline)).toEqual([undefined]);
  gate.mode = "fail";
  await expect(end(bot.dialogs()[0]!.id)).rejects.toThrow(/refused a write/);
  gate.open();
  slow.resolve();
  expect(await said(3)).toEqual(["Which size?", "large, noted.", "How many?"]);
  dm("2");
  await expect.poll(() => bot.dialogs()).toEqual([]);
  dm("3");
  expect(await said(4)).toEqual(["Which size?", "large, noted.", "How many?", "not a command: 3"]);
});

/** The daemon stopped and started again on the same store (`between`, while it is down): its bot. */
async function restart(between?: () => unknown) {
  running = await restarted(between);
  return running.daemon.bots[0]!;
}

it("an end left in doubt that landed, then the daemon restarts: the note said once at its start, in order", async () => {
  const { gate, dm, dialog } = await asked();
  await endInDoubt(gate, dialog.id);
  // The person writes while the daemon is down: caught up after the note.
  const bot = await restart(() => dm("large"));
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  expect(bot.dialogs()).toEqual([]);
  await expect(end(dialog.id)).rejects.toMatchObject({ code: "UNKNOWN_DIALOG" });
  await restart();
  dm("2");
  expect(await said(4)).toEqual(["Which size?", NOTE, "not a command: large", "not a command: 2"]);
});

it("an end left in doubt that did not land, then the daemon restarts: the dialog goes on, nothing said", async () => {
  const { gate, dm, dialog } = await asked();
  gate.mode = "fail";
  await expect(end(dialog.id)).rejects.toThrow(/refused a write/);
  gate.open();
  const bot = await restart();
  expect(bot.dialogs().map((d) => d.id)).toEqual([dialog.id]);
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
});

it("an end left in doubt that landed, its note said before a restart: not said again after it", async () => {
  const { gate, dm, dialog } = await asked();
  await endInDoubt(gate, dialog.id);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  await restart();
  dm("2");
  expect(await said(4)).toEqual(["Which size?", NOTE, "not a command: large", "not a command: 2"]);
});

it.each([
  ["then a restart", 0, 0],
  ["then 25 more of the bot's messages there and a restart", 25, 0],
  // The server stamps the note before the time the end was decided, by the daemon's clock.
  ["the server's clock 10 s behind, then a restart", 0, 10_000],
])(
  "a note said whose header could not be cleared, %s: found said, not said again",
  async (_, more, behind) => {
    const { gate, dm, dialog } = await asked("pick", "Which size?", behind);
    await endInDoubt(gate, dialog.id);
    // The answer's append passes (refused as ended); the note's, once said, is refused.
    gate.mode = "fail";
    gate.skip = 1;
    dm("large");
    expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
    await expect
      .poll(() => running!.logged("could not record that an ended dialog's note was said"))
      .toHaveLength(1);
    gate.open();
    // The conversation moves on: the bot may say more there than a look at its newest 20 covers.
    for (let i = 1; i <= more; i++) dm(`${i}`);
    const answered = Array.from({ length: more }, (_, i) => `not a command: ${i + 1}`);
    const before = ["Which size?", NOTE, "not a command: large", ...answered];
    expect(await said(before.length)).toEqual(before);
    await restart();
    dm("last");
    expect(await said(before.length + 1)).toEqual([...before, "not a command: last"]);
  },
);
