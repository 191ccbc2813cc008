/**
 * A dialog's end written through store faults: the end of a dialog that ran to its end, refused
 * by the store, or landed with its reply lost, is tried again as an answer's write is, the
 * person's next message there waiting for it: then that message is an ordinary one, answered at
 * once, and the dialog is gone. An operator's end through an outage is answered pending, by the
 * admin route and the CLI alike, and lands once the store is back; one asked while the dialog's
 * first question is being sent or written waits for it, then ends the dialog, its note said. That
 * wait is bounded (FIRST_QUESTION_WAIT_MS on the bot's clock): past it, through a long outage,
 * the end is refused (`DIALOG_STARTING`; the admin route: 409 and the code; `bothost dialogs end`:
 * exit 75 and one line) and never made: once the store is back the dialog goes on, and the end
 * run again ends it. An end whose own write the store holds is answered within END_WRITE_WAIT_MS
 * (`DIALOG_END_PENDING`): the write cannot be called back, and lands once the store answers. A
 * real daemon in this process on the test clock against the sandbox over HTTP; the store is a
 * FileStore behind a gate; the handler timeout is an hour, so a message left waiting on the
 * dialog would not be answered within the test.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, expect, it, vi } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { runDialogsCommand } from "../../src/cli/dialogs.ts";
import { dialogDesk, OPERATOR_ENDED_NOTE } from "../../src/daemon/dialog-desk.ts";
import {
  END_TOO_EARLY,
  END_UNANSWERED,
  END_WRITE_WAIT_MS,
  FIRST_QUESTION_WAIT_MS,
} from "../../src/pipeline/dialogs/dialog-ends.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import type { TestClock } from "../../src/testing/test-clock.ts";
import { deferred } from "../support/deferred.ts";
import { freePort } from "../support/free-port.ts";
import { startGatedDaemon } from "../support/gated-daemon.ts";
import { type GateMode, StoreGate } from "../support/gated-store.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";
const NOTE = "Ended by an operator.";

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
let clock: TestClock | undefined;
/** The gate of the test's store, opened before the daemon stops (a held write would hold the stop). */
let gated: StoreGate | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  gated?.open();
  await running?.stop();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Everything the bot said, once it said `count` things. */
const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

/**
 * The daemon on a store whose dialog writes pass `gate` (`global`: extra top-level YAML); resolves
 * a direct message to the bot.
 */
async function start(gate: StoreGate, global?: string) {
  gated = gate;
  const up = await startGatedDaemon({
    name: "orders",
    email: BOT,
    fullName: "Orders",
    definition: orders,
    extra: "handler_timeout: 1h",
    gate,
    ...(global ? { global } : {}),
  });
  ({ sandbox, running, dir, clock } = up);
  return up.dm;
}

/** The bot's one dialog, once it waits at its question (its log kept). */
async function waiting() {
  const bot = running!.daemon.bots[0]!;
  await expect.poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  return bot.dialogs()[0]!;
}

/** "order" asked and answered "large": the run that took it is under way, held before its reply. */
async function orderAnswered(gate: StoreGate) {
  slow = deferred();
  const dm = await start(gate);
  const bot = running!.daemon.bots[0]!;
  dm("order");
  expect(await said(1)).toEqual(["Which size?"]);
  const { id } = await waiting();
  dm("large");
  // The dialog's next write is its end.
  await expect.poll(() => bot.dialogs().map((d) => d.deadline)).toEqual([undefined]);
  return { dm, bot, id };
}

it.each<[string, GateMode]>([
  ["refused while the store is down", "fail"],
  ["landed with its reply lost", "lose"],
])("a dialog's end %s is tried again; the person's next message is then ordinary", async (_, mode) => {
  const gate = new StoreGate();
  const { dm, bot } = await orderAnswered(gate);
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

it("an operator's end asked while the dialog's own end is being written says no such dialog once it lands, or pending as its own; no note is said", async () => {
  const gate = new StoreGate();
  const { dm, bot, id } = await orderAnswered(gate);
  // The run's last reply said, its end's write held by the store.
  gate.mode = "hang";
  slow.resolve();
  expect(await said(2)).toEqual(["Which size?", "One large."]);
  await gate.stoppedAt(1);
  const end = () =>
    dialogDesk(running!.daemon.bots)
      .endDialog("orders", id, NOTE)
      .then(
        () => "ended",
        (err: { code?: string; message: string }) => `${err.code}: ${err.message}`,
      );
  // Past the limit: pending, as the dialog's own end, with no note to come.
  expect(await driven(end(), END_WRITE_WAIT_MS)).toBe(
    `DIALOG_END_PENDING: dialog ${id} was already ending (its run came to its end) and that end has not landed within 3 s (the state store is down, failing or not answering): it is tried until the store takes it, and no operator's note is said; meanwhile the dialog asks nothing more. Once it lands, bothost dialogs no longer lists it`,
  );
  // Within it: that end lands, and there is no dialog left to end.
  const again = end();
  gate.open();
  expect(await again).toBe(`UNKNOWN_DIALOG: bot "orders" has no dialog ${id} (it ended, or never began)`);
  expect(bot.dialogs()).toEqual([]);
  dm("thanks");
  expect(await said(3)).toEqual(["Which size?", "One large.", "not a command: thanks"]);
  expect(running!.logged(END_UNANSWERED)).toEqual([]);
});

/** A config for the admin commands, reaching the running daemon on its state and `http.listen` `port`. */
async function cliConfig(port: number): Promise<string> {
  const file = join(dir!, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox!.url}\nstate:\n  path: ${running!.stateDir}\nhttp:\n  listen: 127.0.0.1:${port}\nbots:\n` +
      `  orders:\n    module: ./x.ts\n    email: ${BOT}\n    api_key: any-key-0123456789\n`,
  );
  return file;
}

/** What `bothost dialogs` with `argv` printed on stderr, and its exit code. */
async function dialogsCommand(argv: string[]): Promise<{ code: number; printed: string }> {
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  const code = await runDialogsCommand(argv);
  const printed = stderr.mock.calls.map((c) => String(c[0])).join("");
  stderr.mockRestore();
  return { code, printed };
}

/** Up, the person asked the first of "pick"'s questions: the dialog waits at it. */
async function asked(gate: StoreGate, global?: string) {
  const dm = await start(gate, global);
  dm("pick");
  expect(await said(1)).toEqual(["Which size?"]);
  return { dm, dialog: await waiting() };
}

it("an operator's end through an outage is answered pending alike by the admin route (504 and its code) and bothost dialogs (one line, exit 1); it lands once the store is back", async () => {
  const gate = new StoreGate();
  const port = await freePort();
  const { dm, dialog } = await asked(gate, `http:\n  listen: 127.0.0.1:${port}`);
  const file = await cliConfig(port);
  gate.mode = "fail";
  const route = await driven(
    request(`http://127.0.0.1:${port}/admin/dialogs/orders/${dialog.id}/end`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    }),
    END_WRITE_WAIT_MS,
  );
  expect(route.statusCode).toBe(504);
  const pending = (await route.body.json()) as { error: string; code: string };
  expect(pending).toEqual({ error: expect.stringMatching(/is under way/), code: "DIALOG_END_PENDING" });
  // Run again while the first is tried still: the same answer.
  const { code, printed } = await driven(
    dialogsCommand(["end", "orders", dialog.id, "-c", file]),
    END_WRITE_WAIT_MS,
  );
  expect({ code, printed }).toEqual({ code: 1, printed: `bothost dialogs: ${pending.error}\n` });
  // The store back: the end lands, the person told once; their next message is an ordinary one.
  gate.open();
  await clock!.advance(30_000);
  expect(await said(2)).toEqual(["Which size?", OPERATOR_ENDED_NOTE]);
  await expect.poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", OPERATOR_ENDED_NOTE, "not a command: large"]);
});

it("an operator's end whose read of the dialog's log the store does not answer is refused within the limit, nothing ended", async () => {
  const gate = new StoreGate();
  const { dm, dialog } = await asked(gate);
  gate.readsHeld = 1;
  const outcome = dialogDesk(running!.daemon.bots)
    .endDialog("orders", dialog.id, NOTE)
    .then(
      () => "ended",
      (err: { code?: string; message: string }) => `${err.code}: ${err.message}`,
    );
  await gate.stoppedAt(1);
  await clock!.advance(END_WRITE_WAIT_MS);
  expect(await outcome).toBe(
    `STATE_UNAVAILABLE: the state store has not answered the read of dialog ${dialog.id}'s log within 3 s (it is down or not answering): nothing was ended; run this again once it answers`,
  );
  // The store answers late: the dialog goes on, the person's answer taken.
  gate.open();
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
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

it("an operator's end whose write the store holds past the limit is answered DIALOG_END_PENDING; it lands once the store answers, the person told once", async () => {
  const gate = new StoreGate();
  const { dm, dialog } = await asked(gate);
  gate.mode = "hang";
  const outcome = dialogDesk(running!.daemon.bots)
    .endDialog("orders", dialog.id, NOTE)
    .then(
      () => "ended",
      (err: { code?: string }) => err.code,
    );
  await gate.stoppedAt(1);
  await clock!.advance(END_WRITE_WAIT_MS);
  expect(await outcome).toBe("DIALOG_END_PENDING");
  expect(running!.logged(END_UNANSWERED)).toHaveLength(1);
  // Run again meanwhile, the end answers the same: under way (not "nothing was ended", nor no
  // such dialog), and nothing more is read or written. (On Redis a read waits behind the held
  // write: it would time out, and the operator be told nothing was ended.)
  gate.readsHeld = 1;
  const again = dialogDesk(running!.daemon.bots)
    .endDialog("orders", dialog.id, NOTE)
    .then(
      () => "ended",
      (err: { code?: string }) => err.code,
    );
  expect(await driven(again, END_WRITE_WAIT_MS)).toBe("DIALOG_END_PENDING");
  gate.readsHeld = 0;
  // The store answers: the write it held lands, as the operator was told it might.
  gate.open();
  expect(await said(2)).toEqual(["Which size?", NOTE]);
  await expect.poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", NOTE, "not a command: large"]);
  // Only the one write was made: no try began past the limit.
  expect(gate.stopped).toBe(1);
});

/**
 * `work`'s outcome, an operator's end that waits at most `limit` (by default, for a dialog's first
 * question to be kept): once that bound is set on the daemon's clock (the request reached the
 * daemon), the clock passes it. Waiting for the timer, not moving the clock in a loop, so that a
 * slow machine's request cannot arrive after the loop is over.
 */
async function driven<T>(work: Promise<T>, limit = FIRST_QUESTION_WAIT_MS): Promise<T> {
  let done = false;
  const outcome = work.finally(() => {
    done = true;
  });
  outcome.catch(() => {});
  // The clock runs at the real pace between moves: the bound has at most `limit` left, and more
  // than a second less.
  const bound = (d: number) => d <= limit && d > limit - 1_000;
  await expect.poll(() => done || clock!.pendingDelays().some(bound), { timeout: 60_000 }).toBe(true);
  if (!done) await clock!.advance(limit);
  return outcome;
}

/** The person answers both questions: the dialog went on, nothing ended. */
async function answeredThrough(dm: (content: string) => number) {
  const bot = running!.daemon.bots[0]!;
  await waiting();
  expect(await said(1)).toEqual(["Which size?"]);
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
}

it.each<[string, GateMode]>([
  ["held", "hang"],
  ["refused through an outage", "fail"],
])(
  "an operator's end while a dialog's first question's write is %s past the limit is refused, and never made",
  async (_, mode) => {
    const gate = new StoreGate();
    const dm = await start(gate);
    gate.mode = mode;
    const id = String(dm("pick"));
    await gate.stoppedAt(1);
    const outcome = dialogDesk(running!.daemon.bots)
      .endDialog("orders", id, NOTE)
      .then(
        () => "ended",
        (err: { code?: string }) => err.code,
      );
    await clock!.advance(FIRST_QUESTION_WAIT_MS);
    // The store back: the question is recorded (refused, once its next try comes due).
    gate.open();
    await clock!.advance(30_000);
    expect(await outcome).toBe("DIALOG_STARTING");
    expect(running!.logged(END_TOO_EARLY)).toHaveLength(1);
    await answeredThrough(dm);
    expect(await said(3)).not.toContain(NOTE);
  },
);

it("the admin route and bothost dialogs end say the same: refused (409, exit 75), nothing ended", async () => {
  const gate = new StoreGate();
  const port = await freePort();
  const dm = await start(gate, `http:\n  listen: 127.0.0.1:${port}`);
  const file = await cliConfig(port);
  gate.mode = "hang";
  const id = String(dm("pick"));
  await gate.stoppedAt(1);

  const route = await driven(
    request(`http://127.0.0.1:${port}/admin/dialogs/orders/${id}/end`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ note: NOTE }),
    }),
  );
  expect(route.statusCode).toBe(409);
  const refused = (await route.body.json()) as { error: string; code: string };
  expect(refused).toEqual({ error: expect.stringMatching(/nothing was ended/), code: "DIALOG_STARTING" });

  const { code, printed } = await driven(dialogsCommand(["end", "orders", id, "--note", NOTE, "-c", file]));
  expect({ code, printed }).toEqual({ code: 75, printed: `bothost dialogs: ${refused.error}\n` });
  expect(refused.error).toMatch(
    new RegExp(`^dialog ${id}'s first question is still being sent or recorded after 5 s`),
  );

  expect(running!.logged(END_TOO_EARLY)).toHaveLength(2);

  // The store back, the question recorded: the same command, run again as it says, ends the dialog.
  gate.open();
  const bot = running!.daemon.bots[0]!;
  await waiting();
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  expect(await runDialogsCommand(["end", "orders", id, "--note", NOTE, "-c", file])).toBe(0);
  stdout.mockRestore();
  expect(await said(2)).toEqual(["Which size?", NOTE]);
  expect(bot.dialogs()).toEqual([]);
});
