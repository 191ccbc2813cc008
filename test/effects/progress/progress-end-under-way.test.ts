/**
 * A dialog's run under way (an answer taken, its handler working with a progress open, its next
 * question not yet asked) when an operator ends the dialog (`bothost dialogs end`): the run stops
 * at its next question, and the progresses it has open end as failed (the failed note, the
 * `failed` reaction in place of `working`), once, whether the run opened them or an earlier run
 * did (that one the end's note ends too: found ended, it is not ended again); also when the run
 * failed and its dialog was ended during the pause before its retry. The person reads
 * what the run said, the note, then nothing more from the run. Before, a progress the run opened
 * kept its placeholder and 👀 for good. And the person's answer coming while the end reads the
 * dialog's record waits for the end (the note, then the answer as an ordinary message): before,
 * it was taken, its run opened a progress and asked on, and the end, its record read before the
 * answer, left that progress open. A run whose next question is sent and not yet recorded (a
 * store slow to answer) when the end comes, the question recorded first: the end takes the
 * progresses from the log as it stands when the end is recorded, so the one the run opened ends
 * too, also when the daemon is killed before its edit got through (the next start ends it).
 * Before, it kept "Shipping…" and 👀 for good. The person's next message there is an ordinary
 * one, also while another dialog waits elsewhere: before, the entry the kept question made
 * outlived the end, took the message as an answer and held it. The question being sent when the
 * end came (refused as ended once sent): the run ends its progresses itself, once, with its text
 * ("Rolling…"); before, it ended none, one it opened kept "Shipping…" and 👀 for good, and one an
 * earlier run opened was ended from its records without "Rolling…". A run stopped by the end
 * keeps the progresses it ends with the note the ended dialog's header holds, first: the daemon
 * killed before the run's edit got through, the next start ends them, once (before, "Shipping…"
 * and 👀 for good). Its edit failing (500s) for a minute of the clock, the note is said all the
 * same and ends the progress, once, from what the run kept with it; before, the run held the
 * conversation for as long as the edit failed (the note not said, later messages waiting), and
 * the note, once said, dropped what the run kept with it. The dialog's last run (no question after
 * it) under way at the end goes on and finishes its progress; killed first, the next start ends
 * that progress as failed after the note (before, it kept "Delivering…" and 👀 for good, the note
 * said as if nothing were left open). A real daemon in this process
 * against the sandbox over HTTP, on a clock that stands still between the test's moves.
 */
import { afterEach, expect, it } from "vitest";
import { PROGRESS_END_WAIT_MS } from "../../../src/pipeline/dialogs/end-progresses.ts";
import type { InProcessDaemon } from "../../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../../support/gated-daemon.ts";
import { StoreGate } from "../../support/gated-store.ts";
import {
  BOT,
  DAEMON,
  FAILED_NOTE,
  jobs,
  NOTE,
  releaseViews,
  resetJobs,
  SHIP_Q,
  SHIPPED,
  ships,
  TAG_Q,
} from "./release-bot.ts";
import { versions } from "./versions.ts";

let up: GatedDaemon | undefined;
let running: InProcessDaemon | undefined;
let gate: StoreGate | undefined;
afterEach(async () => {
  resetJobs();
  gate?.open();
  gate = undefined;
  up?.sandbox.control.delay(0);
  await closeGatedDaemon(up);
});

const { said, acks, idOf, content, end, settled, killedThenStarted } = releaseViews(() => up!);

/** The bot running on a held clock, its dialogs' log writes and reads through `gate`. */
async function started(gate?: StoreGate) {
  const clock = new TestClock({ held: true });
  const daemon = await startGatedDaemon({ ...DAEMON, definition: ships, clock, ...(gate ? { gate } : {}) });
  up = daemon;
  running = daemon.running;
  return { daemon, bot: daemon.running.daemon.bots[0]! };
}

/** The bot running, asked `command` by the member and answered "yes": the run under way, `shown` in its progress. */
async function underWay(command: string, shown: string) {
  const { daemon, bot } = await started(gate);
  const asked = daemon.dm(command);
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  const dialog = bot.dialogs()[0]!.id;
  const answer = daemon.dm("yes");
  await expect.poll(() => said().includes(shown), { timeout: 15_000 }).toBe(true);
  return { asked, answer, dialog, progress: idOf(shown) };
}

it("a progress the run under way opened ends as failed once its dialog is ended by an operator", async () => {
  const { asked, answer, dialog, progress } = await underWay("ship", "Shipping…");
  await expect.poll(() => acks(asked), { timeout: 15_000 }).toEqual(["eyes"]);
  await end(dialog);
  jobs.work.resolve();
  await settled("hello");
  expect(said()).toEqual([
    "Ship?\n1. yes\n2. no",
    FAILED_NOTE,
    "Shipped; one more thing.",
    NOTE,
    "not a command: hello",
  ]);
  expect([acks(asked), acks(answer)]).toEqual([["warning"], []]);
  expect(versions(up!.sandbox, progress)).toEqual(["Shipping…", FAILED_NOTE]);
  expect(running!.logged("could not")).toEqual([]);
});

it("a progress the run under way opened, given an endedNote, ends with it once its dialog is ended by an operator", async () => {
  jobs.endedNote = "(stopped by an operator: whether it shipped is not known)";
  const { asked, dialog, progress } = await underWay("ship", "Shipping…");
  await end(dialog);
  jobs.work.resolve();
  await settled("hello");
  expect(said()).toEqual(["Ship?\n1. yes\n2. no", jobs.endedNote, SHIPPED, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Shipping…", jobs.endedNote]);
});

it("a progress an earlier run opened, updated by the run under way, ends as failed once", async () => {
  const { asked, dialog } = await underWay("roll", "Roll: waiting for approval…");
  await expect.poll(() => said().includes("Rolling…"), { timeout: 15_000 }).toBe(true);
  const progress = idOf("Rolling…");
  await end(dialog);
  jobs.work.resolve();
  await settled("hello");
  const failed = `Rolling…\n\n${FAILED_NOTE}`;
  expect(said()).toEqual([failed, "Roll?\n1. yes\n2. no", NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Roll: waiting for approval…", "Rolling…", failed]);
  expect(running!.logged("could not")).toEqual([]);
});

it("a person's answer while an operator's end reads the dialog's record waits for the end: the note, then the answer as an ordinary message", async () => {
  gate = new StoreGate();
  const { daemon, bot } = await started(gate);
  const asked = daemon.dm("ship");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  jobs.work.resolve();
  // The end's read of the dialog's log is made, its answer held: the answer comes meanwhile.
  gate.readsHeld = 1;
  const ended = end(bot.dialogs()[0]!.id);
  ended.catch(() => {});
  await gate.stoppedAt(1);
  daemon.dm("yes");
  // As far as the answer goes while the read is held: taken (its run waits at its next question),
  // or waiting behind the end in the conversation.
  await expect
    .poll(() => said().some((s) => s.startsWith("Tag it?")) || bot.status.inFlight >= 2, { timeout: 15_000 })
    .toBe(true);
  gate.open();
  await ended;
  await settled("hello");
  expect(said()).toEqual(["Ship?\n1. yes\n2. no", NOTE, "not a command: yes", "not a command: hello"]);
  expect(acks(asked)).toEqual([]);
  expect(running!.logged("could not")).toEqual([]);
});

it("a progress a failed run opened ends as failed once its dialog is ended during the pause before the retry", async () => {
  jobs.failing = 1;
  const { asked, dialog, progress } = await underWay("pack", "Packing…");
  await expect
    .poll(() => running!.logged("running it again after a pause"), { timeout: 15_000 })
    .toHaveLength(1);
  await end(dialog);
  // Past the pause: the retry finds the dialog ended, and its handler does not run again.
  await expect
    .poll(
      async () => {
        await up!.clock.advance(1_000);
        return running!.logged("ended while its run was under way").length;
      },
      { timeout: 15_000 },
    )
    .toBe(1);
  await settled("hello");
  expect(said()).toEqual(["Pack?\n1. yes\n2. no", FAILED_NOTE, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Packing…", FAILED_NOTE]);
});

/**
 * "ship"'s work done, its next question sent and that question's append held by the gate, the
 * operator ends `dialog`: the end's write is held behind the question's, then both go through.
 */
async function endWhileAsking(dialog: string) {
  const held = gate!;
  held.mode = "hang";
  jobs.work.resolve();
  await held.stoppedAt(1);
  expect(said().at(-1)).toBe(TAG_Q);
  const ended = end(dialog);
  await held.stoppedAt(2);
  held.open();
  await ended;
}

it("the end begun while the run's next question is being recorded, the question kept first: the progress ends as failed once", async () => {
  gate = new StoreGate();
  const { asked, dialog, progress } = await underWay("ship", "Shipping…");
  await endWhileAsking(dialog);
  await settled("hello");
  await settled("yes");
  expect(running!.daemon.bots[0]!.dialogs()).toEqual([]);
  expect(said()).toEqual([
    SHIP_Q,
    FAILED_NOTE,
    SHIPPED,
    TAG_Q,
    NOTE,
    "not a command: hello",
    "not a command: yes",
  ]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Shipping…", FAILED_NOTE]);
  expect(running!.logged("could not")).toEqual([]);
});

it("the question kept first, the end landed, the daemon killed before the progress's edit got through: the next start ends it, the note said once", async () => {
  gate = new StoreGate();
  const { asked, dialog, progress } = await underWay("ship", "Shipping…");
  // The progress's first edit fails, and so does the next start's first: each is tried again a second later.
  up!.sandbox.control.failNext(2, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  await endWhileAsking(dialog);
  await expect.poll(() => said().includes(NOTE), { timeout: 15_000 }).toBe(true);
  await expect.poll(() => running!.logged("an edit failed; retrying"), { timeout: 15_000 }).toHaveLength(1);
  // Killed: the runs still under way are cut off.
  await running!.stop({ keepState: true, deadlineMs: 0 });
  expect(running!.logged("could not end a progress of an ended dialog")).toHaveLength(1);
  expect([content(progress), acks(asked)]).toEqual(["Shipping…", ["eyes"]]);
  running = await up!.restart();
  await expect.poll(() => running!.logged("an edit failed; retrying"), { timeout: 15_000 }).toHaveLength(1);
  await settled("hello");
  expect(said()).toEqual([SHIP_Q, FAILED_NOTE, SHIPPED, TAG_Q, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
});

it("the end begun while the run's next question is being recorded, another dialog waiting elsewhere: the person's next message there is an ordinary one", async () => {
  gate = new StoreGate();
  const { dialog } = await underWay("ship", "Shipping…");
  const bot = running!.daemon.bots[0]!;
  // Another person's dialog waits in their own conversation.
  up!.sandbox.control.sendAs("owner@sandbox.example", { type: "direct", to: [BOT], content: "ship" });
  await expect.poll(() => bot.dialogs().filter((d) => d.deadline !== undefined).length).toBe(1);
  await endWhileAsking(dialog);
  await settled("yes");
  expect(bot.dialogs().map((d) => d.userName)).toEqual(["Olive Owner"]);
});

/**
 * The run's question held in its send (the sandbox's delay), the operator ends `dialog`: the end's
 * write is held, then the question's send and the end go through.
 */
async function endWhileSending(dialog: string) {
  const held = gate!;
  held.mode = "hang";
  const ended = end(dialog);
  await held.stoppedAt(1);
  up!.sandbox.control.delay(0);
  held.open();
  await ended;
}

/** The "ship" run's sends held: its reply, let through, then its question, held until the end began. */
async function questionHeld() {
  const { control } = up!.sandbox;
  control.delay(3_600_000, { paths: [/^\/messages$/] });
  jobs.work.resolve();
  await expect.poll(() => control.delayed(), { timeout: 15_000 }).toBe(1);
  control.delay(0);
  control.delay(3_600_000, { paths: [/^\/messages$/] });
  await expect
    .poll(() => said().includes(SHIPPED) && control.delayed() === 1, { timeout: 15_000 })
    .toBe(true);
}

it("the end begun while the run's next question is being sent, the question refused as ended: the progress ends as failed once", async () => {
  gate = new StoreGate();
  const { asked, dialog, progress } = await underWay("ship", "Shipping…");
  await questionHeld();
  await endWhileSending(dialog);
  await settled("hello");
  expect(said()).toEqual([SHIP_Q, FAILED_NOTE, SHIPPED, TAG_Q, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Shipping…", FAILED_NOTE]);
  expect(running!.logged("ended while its run was under way")).toHaveLength(1);
  expect(running!.logged("could not")).toEqual([]);
});

it("the end begun while the run's next question is being sent, a progress an earlier run opened and the run updated: it ends as failed once, with the run's text", async () => {
  gate = new StoreGate();
  const { asked, dialog } = await underWay("roll", "Roll: waiting for approval…");
  await expect.poll(() => said().includes("Rolling…"), { timeout: 15_000 }).toBe(true);
  const progress = idOf("Rolling…");
  const { control } = up!.sandbox;
  control.delay(3_600_000, { paths: [/^\/messages$/] });
  jobs.work.resolve();
  await expect.poll(() => control.delayed(), { timeout: 15_000 }).toBe(1);
  await endWhileSending(dialog);
  await settled("hello");
  const failed = `Rolling…\n\n${FAILED_NOTE}`;
  expect(said()).toEqual([failed, "Roll?\n1. yes\n2. no", TAG_Q, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Roll: waiting for approval…", "Rolling…", failed]);
  expect(running!.logged("could not")).toEqual([]);
});

it("the run stopped at its next question by the end, the daemon killed before its edit of the progress it opened got through: the next start ends it", async () => {
  const { asked, dialog, progress } = await underWay("ship", "Shipping…");
  // The run's edit fails, and so does the next start's first: each tried again a second later.
  up!.sandbox.control.failNext(2, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  await end(dialog);
  jobs.work.resolve();
  await killedThenStarted(asked, progress, [SHIP_Q, FAILED_NOTE, SHIPPED, NOTE]);
});

it("the question refused as ended, the daemon killed before the run's edit of the progress it opened got through: the next start ends it", async () => {
  gate = new StoreGate();
  const { asked, dialog, progress } = await underWay("ship", "Shipping…");
  await questionHeld();
  up!.sandbox.control.failNext(2, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  await endWhileSending(dialog);
  await killedThenStarted(asked, progress, [SHIP_Q, FAILED_NOTE, SHIPPED, TAG_Q, NOTE]);
});

it("the run stopped at its next question by the end, its edit of the progress failing: the conversation moves on after a minute, the note ends it once", async () => {
  const { asked, dialog, progress } = await underWay("ship", "Shipping…");
  const failedEdits = () => running!.logged("an edit failed; retrying").length;
  const retryWaits = () => up!.clock.pendingDelays().some((ms) => ms <= 1_000);
  let armed = 0;
  // One failure of the progress's edit armed at a time: each try fails, until the test stops arming.
  const failOnce = () => {
    if (armed > failedEdits()) return;
    armed++;
    up!.sandbox.control.failNext(1, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  };
  failOnce();
  await end(dialog);
  jobs.work.resolve();
  const from = up!.clock.now();
  while (up!.clock.now() - from < PROGRESS_END_WAIT_MS) {
    await expect.poll(retryWaits, { timeout: 15_000 }).toBe(true);
    expect(said()).not.toContain(NOTE);
    failOnce();
    await up!.clock.advance(1_000);
  }
  // Past the bound, the edit still failing: the note is said all the same.
  await expect.poll(() => said().includes(NOTE), { timeout: 15_000 }).toBe(true);
  await settled("hello");
  await expect.poll(() => content(progress), { timeout: 15_000 }).toBe(FAILED_NOTE);
  expect(said()).toEqual([SHIP_Q, FAILED_NOTE, SHIPPED, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Shipping…", FAILED_NOTE]);
  expect(running!.logged("progress: could not mark it failed")).toHaveLength(1);
});

it("the dialog's last run under way (no question after it) when its dialog is ended, the daemon killed before it finished: the next start ends its progress as failed", async () => {
  const { asked, dialog, progress } = await underWay("deliver", "Delivering…");
  await end(dialog);
  // Killed: the run, its work not done, is cut off; the ended dialog's handler does not run again.
  await running!.stop({ keepState: true, deadlineMs: 0 });
  expect([content(progress), acks(asked)]).toEqual(["Delivering…", ["eyes"]]);
  running = await up!.restart();
  await settled("hello");
  await expect.poll(() => content(progress), { timeout: 15_000 }).toBe(FAILED_NOTE);
  expect(said()).toEqual(["Deliver?\n1. yes\n2. no", FAILED_NOTE, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Delivering…", FAILED_NOTE]);
});

it("the dialog's last run under way when its dialog is ended, killed: the next start ends its progress with its endedNote", async () => {
  jobs.endedNote = "(ended by an operator: whether it was delivered is not known)";
  const { asked, dialog, progress } = await underWay("deliver", "Delivering…");
  await end(dialog);
  await running!.stop({ keepState: true, deadlineMs: 0 });
  running = await up!.restart();
  await settled("hello");
  await expect.poll(() => content(progress), { timeout: 15_000 }).toBe(jobs.endedNote);
  expect(said()).toEqual(["Deliver?\n1. yes\n2. no", jobs.endedNote, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
});

it("the dialog's last run under way when its dialog is ended, left to finish: its progress stays done, the note said after it", async () => {
  const { asked, dialog, progress } = await underWay("deliver", "Delivering…");
  await end(dialog);
  jobs.work.resolve();
  await settled("hello");
  await expect.poll(() => content(progress), { timeout: 15_000 }).toBe("Delivered.");
  expect(said()).toEqual(["Deliver?\n1. yes\n2. no", "Delivered.", NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["check"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Delivering…", "Delivered."]);
});
