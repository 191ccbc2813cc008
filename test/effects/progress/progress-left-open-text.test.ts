/**
 * A progress an earlier run of a dialog opened, updated to "Rolling…" by the run under way when
 * an operator ends the dialog, the daemon killed before the run's edit ending it got through:
 * the next start ends it from the note the ended dialog keeps, with its text and the failed note
 * below ("Rolling…\n\n(failed: …)", as the run would have ended it), its text read back from the
 * server (its records keep fingerprints only). Before, it ended as "(failed: …)" alone: what it
 * said was lost. That ending's edit made with its answer lost, the daemon killed again: the start
 * after recognizes the ending made and does not add the failed note twice. Its message deleted
 * meanwhile, there is nothing to read back nor edit: nothing is posted, the reactions are swapped
 * (as when the run's own edit is refused and its work was not late). Ended past its
 * `finalAfterMs`, its text with the note is posted anew, as the run would have (before: the note
 * alone). A real daemon in this process against the sandbox over HTTP, on a clock that stands
 * still between the test's moves.
 */
import { afterEach, expect, it } from "vitest";
import type { FailOptions } from "../../../src/sandbox/faults.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { deleteMessageAs } from "../../support/delete-message.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../../support/gated-daemon.ts";
import { BOT, DAEMON, FAILED_NOTE, jobs, NOTE, releaseViews, resetJobs, ships } from "./release-bot.ts";
import { versions } from "./versions.ts";

const WAITING = "Roll: waiting for approval…";
const ROLL_Q = "Roll?\n1. yes\n2. no";
const ENDED = `Rolling…\n\n${FAILED_NOTE}`;
const MOVED = "(finished: see below)";

let up: GatedDaemon | undefined;
afterEach(async () => {
  resetJobs();
  await closeGatedDaemon(up);
});

const { said, acks, idOf, content, end, settled } = releaseViews(() => up!);
const logged = (line: string) => up!.running.logged(line).length;

/**
 * "roll" asked and answered, the run under way updating the progress to "Rolling…", the dialog
 * ended by an operator: the run stops at its next question, and the daemon is killed once the
 * run's edit ending the progress failed (a 500, tried again a second later).
 */
async function stoppedRolling() {
  up = await startGatedDaemon({ ...DAEMON, definition: ships, clock: new TestClock({ held: true }) });
  const bot = up.running.daemon.bots[0]!;
  const asked = up.dm("roll");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  const dialog = bot.dialogs()[0]!.id;
  up.dm("yes");
  await expect.poll(() => said().includes(jobs.rolling), { timeout: 15_000 }).toBe(true);
  const progress = idOf(jobs.rolling);
  // Past the pace of the progress's edits: the next one is due at once.
  await up.clock.advance(1_000);
  await end(dialog);
  jobs.work.resolve();
  failingEdit(progress);
  await killedAtFailedEdit();
  return { asked, progress };
}

/** The next edit of `progress` fails (a 500), before it is made or, `after`, once made. */
function failingEdit(progress: number, fault: Pick<FailOptions, "after"> = {}) {
  up!.sandbox.control.failNext(1, {
    status: 500,
    methods: ["PATCH"],
    paths: [`/messages/${progress}`],
    ...fault,
  });
}

/** Once an edit failed (tried again a second later), the daemon is killed. */
async function killedAtFailedEdit() {
  await expect.poll(() => logged("an edit failed; retrying"), { timeout: 15_000 }).toBe(1);
  await up!.running.stop({ keepState: true, deadlineMs: 0 });
}

/** Started again: the progress shows its ending, made once, the note said once. */
async function endedAtStart(asked: number, progress: number) {
  await up!.restart();
  await settled("hello");
  await expect.poll(() => content(progress), { timeout: 15_000 }).toBe(ENDED);
  expect(said()).toEqual([ENDED, ROLL_Q, NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual([WAITING, "Rolling…", ENDED]);
}

it("a progress updated by the run an operator's end stopped, the daemon killed before the run ended it: the next start ends it with its text, the failed note below", async () => {
  const { asked, progress } = await stoppedRolling();
  expect([content(progress), acks(asked)]).toEqual(["Rolling…", ["eyes"]]);
  await endedAtStart(asked, progress);
});

it("the next start's edit ending it made with its answer lost, the daemon killed again: the start after finds it ended, the failed note not added twice", async () => {
  const { asked, progress } = await stoppedRolling();
  // The next start's edit is made, its answer a server error: tried again a second later, killed meanwhile.
  await up!.restart(() => failingEdit(progress, { after: true }));
  await killedAtFailedEdit();
  expect([content(progress), acks(asked)]).toEqual([ENDED, ["eyes"]]);
  await endedAtStart(asked, progress);
});

it("its message deleted while the daemon was down: the next start finds nothing to read back nor edit, posts nothing, and swaps the reactions", async () => {
  const { asked, progress } = await stoppedRolling();
  await up!.restart(() => deleteMessageAs(up!.sandbox, BOT, progress));
  await settled("hello");
  await expect.poll(() => acks(asked), { timeout: 15_000 }).toEqual(["warning"]);
  expect(said()).toEqual([ROLL_Q, NOTE, "not a command: hello"]);
  expect(logged("the server refused to edit the message")).toBe(1);
  expect(logged("could not")).toBe(0);
});

it("ended at the next start past its finalAfterMs: its text with the failed note posted anew, the progress pointing below", async () => {
  jobs.rollFinalAfterMs = 60_000;
  const { asked, progress } = await stoppedRolling();
  await up!.restart(() => up!.clock.advance(120_000));
  await settled("hello");
  await expect
    .poll(() => said(), { timeout: 15_000 })
    .toEqual([MOVED, ROLL_Q, NOTE, ENDED, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual([WAITING, "Rolling…", MOVED]);
});

it("a progress whose own text ends with the failed note's words, ended at the next start: the failed note goes below that text", async () => {
  // Its last paragraph, quoting the release rolled back, reads as the note: only an edit the
  // records do not know of (an ending whose answer was lost) is an ending made.
  jobs.rolling = `Rolling back the release whose job said:\n\n${FAILED_NOTE}`;
  const { asked, progress } = await stoppedRolling();
  expect(content(progress)).toBe(jobs.rolling);
  await up!.restart();
  await settled("hello");
  const ended = `${jobs.rolling}\n\n${FAILED_NOTE}`;
  await expect.poll(() => content(progress), { timeout: 15_000 }).toBe(ended);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual([WAITING, jobs.rolling, ended]);
});
