/**
 * An operator's end (`bothost dialogs end`, through the admin desk) through store faults. One
 * whose write lands but whose reply is lost is tried again, found made in the dialog's log, and
 * finished once: the operator is told it ended, the dialog is no longer listed, and the person is
 * told the note once. One the store keeps failing is answered `DIALOG_END_PENDING` and tried on
 * until the store takes it: meanwhile the dialog is ending (a run under way asks nothing more, no
 * refusal asks again, its deadline records nothing, the person's messages wait for the end and
 * are ordinary ones after its note), and once it lands the note is said once. The bot stopped
 * first, the end's last try decides: landed, the note is said at the next start (also a new
 * daemon's on the same store, before what is caught up); not, the dialog goes on. A real daemon
 * in this process against the sandbox over HTTP, on the test clock; the dialogs' writes pass a
 * gate.
 */
import { rm } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import {
  END_UNANSWERED,
  END_UNCONFIRMED,
  END_WRITE_WAIT_MS,
  ENDED_MEANWHILE,
} from "../../src/pipeline/dialogs/dialog-ends.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import type { TestClock } from "../../src/testing/test-clock.ts";
import { deferred } from "../support/deferred.ts";
import { startGatedDaemon } from "../support/gated-daemon.ts";
import { type GateMode, StoreGate } from "../support/gated-store.ts";
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

/**
 * Ends dialog `id` while the store fails every write after the first (`first`: `lose`, the first
 * lands and loses its reply; `fail`, it is refused too): the operator is told the end is pending.
 */
async function endPending(gate: StoreGate, id: string, first: GateMode = "lose"): Promise<void> {
  gate.mode = first;
  const outcome = end(id).then(
    () => "ended",
    (err: { code?: string }) => err.code,
  );
  await gate.stoppedAt(1);
  gate.mode = "fail";
  await clock.advance(END_WRITE_WAIT_MS);
  expect(await outcome).toBe("DIALOG_END_PENDING");
  expect(running!.logged(END_UNANSWERED)).toHaveLength(1);
}

/** The store back: the end's next try lands, or finds its first try made. */
async function storeBack(gate: StoreGate): Promise<void> {
  gate.open();
  await clock.advance(30_000);
}

it.each<[string, GateMode]>([
  ["landed with its reply lost", "lose"],
  ["refused", "fail"],
])(
  "an operator's end whose first write was %s, then every try refused: pending, still listed; the store back, the note said once",
  async (_, first) => {
    const { gate, dm, bot, dialog } = await asked();
    await endPending(gate, dialog.id, first);
    // Under way: listed as ending until it lands, and ending it again ends nothing more.
    expect(bot.dialogs().map((d) => [d.id, d.ending])).toEqual([[dialog.id, true]]);
    // Asked again meanwhile: pending too; once the first lands, there is no dialog left to end.
    const again = end(dialog.id).then(
      () => "ended",
      (err: { code?: string }) => err.code,
    );
    await clock.advance(END_WRITE_WAIT_MS);
    expect(await again).toBe("DIALOG_END_PENDING");
    await storeBack(gate);
    expect(await said(2)).toEqual(["Which size?", NOTE]);
    expect(bot.dialogs()).toEqual([]);
    await expect(end(dialog.id)).rejects.toMatchObject({ code: "UNKNOWN_DIALOG" });
    dm("large");
    expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  },
);

it("the person writes while an end is pending: the message waits for it, then is an ordinary one after the note", async () => {
  const { gate, dm, bot, dialog } = await asked();
  await endPending(gate, dialog.id, "fail");
  dm("large");
  // Nothing answers "large" while the end is tried: it waits behind the end's note.
  await clock.advance(60_000);
  expect(await said(1)).toEqual(["Which size?"]);
  await storeBack(gate);
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  expect(bot.dialogs()).toEqual([]);
});

it("the question's deadline passes while an end is pending: no timeout runs, the note said once", async () => {
  const { gate, dm, bot, dialog } = await asked();
  await endPending(gate, dialog.id, "fail");
  // Past the question's hour: the dialog is ending, its deadline records nothing.
  await clock.advance(2 * 3_600_000);
  gate.open();
  await clock.advance(30_000);
  expect(await said(2)).toEqual(["Which size?", NOTE]);
  expect(bot.dialogs()).toEqual([]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
});

it("an end pending that landed, then the bot stops and starts again: the note said once at the start", async () => {
  const { gate, dm, bot, dialog } = await asked();
  await endPending(gate, dialog.id);
  await bot.stop(1_000);
  // Not confirmed here: the operator is told so; the next start finds it landed.
  expect(running!.logged(END_UNCONFIRMED)).toHaveLength(1);
  gate.open();
  await bot.start();
  expect(await said(2)).toEqual(["Which size?", NOTE]);
  expect(bot.dialogs()).toEqual([]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
});

it("an end pending that never landed, then the bot stops and starts again: the dialog goes on, nothing said", async () => {
  const { gate, dm, bot, dialog } = await asked();
  await endPending(gate, dialog.id, "fail");
  await bot.stop(1_000);
  // Not confirmed here: the operator is told so; the next start finds it never landed.
  expect(running!.logged(END_UNCONFIRMED)).toHaveLength(1);
  gate.open();
  await bot.start();
  expect(bot.dialogs().map((d) => d.id)).toEqual([dialog.id]);
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
});

it.each([
  ["its next question", "pick", "Which size?", "large", []],
  [
    "the handler's own reply is said, its next question not",
    "note",
    "Which size?",
    "large",
    ["large, noted."],
  ],
  ["its asking again after a refused answer", "count", "How many?", "lots", []],
])(
  "an end pending while a run is under way: %s; the note after, nothing more",
  async (_, command, question, answer, before) => {
    const { gate, dm, bot, dialog } = await asked(command, question);
    slow = deferred();
    dm(answer);
    await expect.poll(() => bot.dialogs().map((d) => d.deadline)).toEqual([undefined]);
    await endPending(gate, dialog.id);
    slow.resolve();
    await storeBack(gate);
    expect(await said(2 + before.length)).toEqual([question, ...before, NOTE]);
    expect(running!.logged(ENDED_MEANWHILE)).toHaveLength(1);
    expect(bot.dialogs()).toEqual([]);
    dm("2");
    expect(await said(3 + before.length)).toEqual([question, ...before, NOTE, "not a command: 2"]);
  },
);

/** The daemon stopped and started again on the same store (`between`, while it is down): its bot. */
async function restart(between?: () => unknown) {
  running = await restarted(between);
  return running.daemon.bots[0]!;
}

it("an end pending that landed, then the daemon restarts: the note said once at its start, in order", async () => {
  const { gate, dm, dialog } = await asked();
  await endPending(gate, dialog.id);
  gate.open();
  const before = running!;
  // The person writes while the daemon is down: caught up after the note.
  const bot = await restart(() => dm("large"));
  expect(before.logged(END_UNCONFIRMED)).toEqual([]); // confirmed before the stop
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  expect(bot.dialogs()).toEqual([]);
  await expect(end(dialog.id)).rejects.toMatchObject({ code: "UNKNOWN_DIALOG" });
  await restart();
  dm("2");
  expect(await said(4)).toEqual(["Which size?", NOTE, "not a command: large", "not a command: 2"]);
});

it("an end pending that never landed, then the daemon restarts: the dialog goes on, nothing said", async () => {
  const { gate, dm, dialog } = await asked();
  await endPending(gate, dialog.id, "fail");
  const before = running!;
  // The store back only once the daemon stopped: the end's last try, at the stop, was refused.
  const bot = await restart(() => gate.open());
  expect(before.logged(END_UNCONFIRMED)).toHaveLength(1);
  expect(bot.dialogs().map((d) => d.id)).toEqual([dialog.id]);
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
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
    await endPending(gate, dialog.id);
    // The end's next try finds it made, the note is marked as being sent; its clearing, once it
    // is said, is refused.
    gate.mode = "fail";
    gate.skip = 2;
    await clock.advance(30_000);
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
