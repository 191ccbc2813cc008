/**
 * A dialog's end written through store faults: the end of a dialog that ran to its end, refused
 * by the store, or landed with its reply lost, is tried again as an answer's write is, the
 * person's next message there waiting for it: then that message is an ordinary one, answered at
 * once, and the dialog is gone. An operator's end the store refuses fails, and the dialog goes on
 * as if it had not been asked for: the person's answer is taken; one asked while the dialog's
 * first question is being sent or written waits for it, then ends the dialog, its note said. A
 * real daemon in this process against the sandbox over HTTP; the store is a FileStore behind a
 * gate; the handler timeout is an hour, so a message left waiting on the dialog would not be
 * answered within the test.
 */
import { rm } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { deferred } from "../support/deferred.ts";
import { startGatedDaemon } from "../support/gated-daemon.ts";
import { type GateMode, StoreGate } from "../support/gated-store.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";

/** Holds the dialog's last run, after its answer and before its end. */
let slow = deferred();

const orders = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await slow.promise;
      await ctx.reply(`One ${size.text}.`);
    });
    bot.command("pick", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      const count = await ctx.prompt("How many?");
      await ctx.reply(`${count.text} × ${size.text}`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
let dir: string | undefined;
afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Everything the bot said, once it said `count` things. */
const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

/** The daemon on a store whose dialog writes pass `gate`; resolves a direct message to the bot. */
async function start(gate: StoreGate) {
  const up = await startGatedDaemon({
    name: "orders",
    email: BOT,
    fullName: "Orders",
    definition: orders,
    extra: "handler_timeout: 1h",
    gate,
  });
  ({ sandbox, running, dir } = up);
  return up.dm;
}

/** The bot's one dialog, once it waits at its question (its log kept). */
async function waiting() {
  const bot = running!.daemon.bots[0]!;
  await expect.poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  return bot.dialogs()[0]!;
}

it.each<[string, GateMode]>([
  ["refused while the store is down", "fail"],
  ["landed with its reply lost", "lose"],
])("a dialog's end %s is tried again; the person's next message is then ordinary", async (_, mode) => {
  slow = deferred();
  const gate = new StoreGate();
  const dm = await start(gate);
  const bot = running!.daemon.bots[0]!;
  dm("order");
  expect(await said(1)).toEqual(["Which size?"]);
  await waiting();
  dm("large");
  // The run that took "large" is under way: the dialog's next write is its end.
  await expect.poll(() => bot.dialogs().map((d) => d.deadline)).toEqual([undefined]);
  gate.mode = mode;
  slow.resolve();
  expect(await said(2)).toEqual(["Which size?", "One large."]);
  await gate.stoppedAt(1);
  gate.open();
  dm("thanks");
  expect(await said(3)).toEqual(["Which size?", "One large.", "not a command: thanks"]);
  expect(bot.dialogs()).toEqual([]);
  expect(running!.logged("could not record a dialog's end")).toEqual([]);
});

it("an operator's end the store refuses fails, and the dialog goes on: the person's answer is taken", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("pick");
  expect(await said(1)).toEqual(["Which size?"]);
  const dialog = await waiting();
  gate.mode = "fail";
  await expect(dialogDesk(running!.daemon.bots).endDialog("orders", dialog.id)).rejects.toThrow(
    /refused a write/,
  );
  gate.open();
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
  await expect.poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
});

it.each([
  ["sent (its send held by the server)", "send"],
  ["written (its log's first write held)", "write"],
])(
  "an operator's end while a dialog's first question is being %s waits for it: the dialog ended, the person told",
  async (_, phase) => {
    const gate = new StoreGate();
    const dm = await start(gate);
    const control = sandbox!.control;
    if (phase === "send") control.delay(60_000, { paths: [/^\/messages$/] });
    else gate.mode = "hang";
    const id = String(dm("pick"));
    if (phase === "send") await control.waitFor(() => control.delayed() > 0);
    else await gate.stoppedAt(1);
    // Listed, its log not kept yet.
    const bot = running!.daemon.bots[0]!;
    expect(bot.dialogs().map((d) => d.id)).toEqual([id]);
    const ending = dialogDesk(running!.daemon.bots).endDialog("orders", id, "Ended by an operator.");
    if (phase === "send") control.delay(0);
    else gate.open();
    await ending;
    expect(await said(2)).toEqual(["Which size?", "Ended by an operator."]);
    expect(bot.dialogs()).toEqual([]);
    dm("large");
    expect(await said(3)).toEqual(["Which size?", "Ended by an operator.", "not a command: large"]);
  },
);
