/**
 * A dialog's run stopped with a progress open (`ctx.progress`), the progress's edit failing or
 * the daemon killed before it got through: the progress ends as failed (the failed note, the
 * `failed` reaction in place of `working`), once, and is never left "working" for good. Stopped
 * by changed code: the progress is kept with the dialog's end and ended before the note; its edit
 * failing past a minute, the note is said and its ending ends it (before, given up after a
 * minute, "Roll: waiting for approval…" and 👀 for good); the daemon killed first, the next start
 * ends it (before, kept nowhere: the same for good). Stopped by an operator's end, the write that
 * keeps it with the end's note failing, its edit failing past a minute: the run ends it itself,
 * the note after it (before, given up after a minute: the note, said next, did not carry it,
 * "Shipping…" for good). A failed run's dialog ended during the pause before its retry, the
 * daemon killed before the progress's edit got through: the next start ends it (before,
 * "Packing…" for good: it was kept nowhere). An operator's end pending (`DIALOG_END_PENDING`,
 * its first write landed with its reply lost), the daemon killed likewise once the end is found
 * made: the next start ends it (before, the run kept it nowhere, "Shipping…" for good). A real daemon in this process against
 * the sandbox over HTTP, on a clock that stands still between the test's moves.
 */
import { afterEach, expect, it } from "vitest";
import { CHANGED_NOTE, END_WRITE_WAIT_MS } from "../../../src/pipeline/dialogs/dialog-ends.ts";
import { PROGRESS_END_WAIT_MS } from "../../../src/pipeline/dialogs/end-progresses.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../../support/gated-daemon.ts";
import { StoreGate } from "../../support/gated-store.ts";
import {
  DAEMON,
  FAILED_NOTE,
  jobs,
  NOTE,
  releaseViews,
  resetJobs,
  SHIP_Q,
  SHIPPED,
  ships,
} from "./release-bot.ts";
import { versions } from "./versions.ts";

const WAITING = "Roll: waiting for approval…";

let up: GatedDaemon | undefined;
let gate: StoreGate | undefined;
afterEach(async () => {
  resetJobs();
  gate?.open();
  gate = undefined;
  await closeGatedDaemon(up);
});

const { said, acks, idOf, content, end, shortWait, settled, killedThenStarted } = releaseViews(() => up!);
const logged = (line: string) => up!.running.logged(line).length;

/** The bot running on a held clock, its dialogs' log writes and reads through `gate`. */
async function started() {
  const clock = new TestClock({ held: true });
  up = await startGatedDaemon({ ...DAEMON, definition: ships, clock, ...(gate ? { gate } : {}) });
  return up.running.daemon.bots[0]!;
}

/** The member asks `command`; resolves their message's id and the dialog, once it waits at its question. */
async function asking(command: string) {
  const bot = up!.running.daemon.bots[0]!;
  const asked = up!.dm(command);
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  return { asked, dialog: bot.dialogs()[0]!.id };
}

/** "ship" asked and answered: its run under way, its progress open. */
async function shipping() {
  await started();
  const { asked, dialog } = await asking("ship");
  up!.dm("yes");
  await expect.poll(() => said().includes("Shipping…"), { timeout: 15_000 }).toBe(true);
  return { asked, dialog, progress: idOf("Shipping…") };
}

/** The edits of `progress` failing (500), one failure armed at a time. */
function failingEdits(progress: number) {
  let armed = 0;
  const arm = () => {
    if (armed > logged("an edit failed; retrying")) return;
    armed++;
    up!.sandbox.control.failNext(1, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  };
  return {
    arm,
    /** Each try fails for `ms` of the clock (a second between tries), unless its ending is given up first. */
    async failFor(ms: number) {
      const from = up!.clock.now();
      while (up!.clock.now() - from < ms) {
        const gaveUp = () => logged("progress: could not mark it failed") > 0;
        await expect.poll(() => shortWait() || gaveUp(), { timeout: 15_000 }).toBe(true);
        if (gaveUp()) return;
        arm();
        await up!.clock.advance(1_000);
      }
    },
  };
}

/** The next try of the edit let through: the progress shows its failed note. */
async function endsFailed(progress: number) {
  const shown = async () => {
    if (shortWait()) await up!.clock.advance(1_000);
    return content(progress);
  };
  await expect.poll(shown, { timeout: 15_000 }).toBe(FAILED_NOTE);
}

it("the code changed under the dialog, the edit ending its progress failing past a minute: the note is said then, and its ending ends the progress, once", async () => {
  await started();
  const { asked } = await asking("roll");
  const progress = idOf(WAITING);
  const edits = failingEdits(progress);
  edits.arm();
  jobs.updated = true;
  up!.dm("yes");
  // The run ends its progress before the note, a minute at most: each try fails meanwhile.
  const from = up!.clock.now();
  while (up!.clock.now() - from < PROGRESS_END_WAIT_MS) {
    await expect.poll(shortWait, { timeout: 15_000 }).toBe(true);
    expect(said()).not.toContain(CHANGED_NOTE);
    edits.arm();
    await up!.clock.advance(1_000);
  }
  // Past the bound, the edit still failing: the note is said all the same, and its ending ends it.
  await expect.poll(() => said().includes(CHANGED_NOTE), { timeout: 15_000 }).toBe(true);
  await endsFailed(progress);
  expect(logged("progress: could not mark it failed")).toBe(1);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual([WAITING, FAILED_NOTE]);
  expect(said()).toEqual([FAILED_NOTE, "Roll?\n1. yes\n2. no", CHANGED_NOTE]);
});

it("the code changed under the dialog, the daemon killed before the edit ending its progress got through: the next start ends it, the note said once", async () => {
  await started();
  const { asked } = await asking("roll");
  const progress = idOf(WAITING);
  // The edit ending it fails, and so does the next start's first: each tried again a second later.
  up!.sandbox.control.failNext(2, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  jobs.updated = true;
  up!.dm("yes");
  await killedThenStarted(asked, progress, [FAILED_NOTE, "Roll?\n1. yes\n2. no", CHANGED_NOTE], WAITING);
});

it("an operator's end, the write keeping the run's progress with the note failing, its edit failing past a minute: the run ends it, then the note", async () => {
  gate = new StoreGate();
  const { asked, dialog, progress } = await shipping();
  const edits = failingEdits(progress);
  edits.arm();
  await end(dialog);
  gate.mode = "fail";
  jobs.work.resolve();
  // The write keeping the progress with the note fails, tried again after pauses of 0.25, 0.5 and 1 s.
  const notKept = async () => {
    if (shortWait()) await up!.clock.advance(1_000);
    return logged("could not keep an ended dialog's open progresses");
  };
  await expect.poll(notKept, { timeout: 15_000 }).toBe(1);
  gate.open();
  await edits.failFor(90_000);
  expect(up!.running.logged("progress: could not mark it failed")).toEqual([]);
  expect(said()).not.toContain(NOTE);
  await endsFailed(progress);
  await settled("hello");
  expect(said()).toEqual([SHIP_Q, FAILED_NOTE, SHIPPED, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Shipping…", FAILED_NOTE]);
});

it("a failed run's dialog ended during the pause before its retry, the daemon killed before the progress's edit got through: the next start ends it", async () => {
  jobs.failing = 1;
  await started();
  const { asked, dialog } = await asking("pack");
  up!.dm("yes");
  await expect.poll(() => logged("running it again after a pause"), { timeout: 15_000 }).toBe(1);
  const progress = idOf("Packing…");
  // The edit ending it fails, and so does the next start's first: each tried again a second later.
  up!.sandbox.control.failNext(2, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  await end(dialog);
  // Past the pause: the retry finds the dialog ended, and its handler does not run again.
  await expect
    .poll(
      async () => {
        await up!.clock.advance(1_000);
        return logged("ended while its run was under way");
      },
      { timeout: 15_000 },
    )
    .toBe(1);
  await killedThenStarted(asked, progress, ["Pack?\n1. yes\n2. no", FAILED_NOTE, NOTE], "Packing…");
});

it("an operator's end pending (DIALOG_END_PENDING) that landed, the daemon killed before the run's edit of its progress got through: the next start ends it", async () => {
  gate = new StoreGate();
  const { asked, dialog, progress } = await shipping();
  up!.sandbox.control.failNext(2, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  // The end's first try lands, its reply lost; the next is held, past the time the operator waits.
  gate.mode = "lose";
  const ended = end(dialog);
  ended.catch(() => {});
  await gate.stoppedAt(1);
  gate.mode = "hang";
  // The run goes on, and stops at its next question: the dialog is ending.
  jobs.work.resolve();
  await expect.poll(() => said().includes(SHIPPED), { timeout: 15_000 }).toBe(true);
  await up!.clock.advance(250);
  await gate.stoppedAt(2);
  await up!.clock.advance(END_WRITE_WAIT_MS);
  await expect(ended).rejects.toMatchObject({ code: "DIALOG_END_PENDING" });
  // The held try failed; the next finds the end made, and the run keeps its progress with the note.
  gate.mode = "open";
  gate.refuse();
  await up!.clock.advance(1_000);
  await killedThenStarted(asked, progress, [SHIP_Q, FAILED_NOTE, SHIPPED, NOTE]);
});
