/**
 * A progress whose final text (three messages long) was being posted anew by the run under way
 * when an operator ended its dialog, the daemon killed once the first part was posted and the
 * second one sent (cut off with its connection): the next start ends it from the ended
 * dialog's note, without the run. A real daemon in this process against the sandbox over HTTP, on
 * a clock that stands still between the test's moves.
 */
import { afterEach, expect, it } from "vitest";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../../support/gated-daemon.ts";
import { lines } from "./feed.ts";
import { answered, DAEMON, FAILED_NOTE, jobs, NOTE, releaseViews, resetJobs, ships } from "./release-bot.ts";

const MOVED = "(finished: see below)";
const ROLL_Q = "Roll?\n1. yes\n2. no";

let up: GatedDaemon | undefined;
afterEach(async () => {
  resetJobs();
  await closeGatedDaemon(up);
});

const { said, acks, end, idOf, settled } = releaseViews(() => up!);

it("the final text's posting cut after its first part by a kill, the dialog ended: the next start posts the rest once, the failed note below it", async () => {
  const parts = [lines(100, 99, 0), lines(100, 99, 100), lines(50, 99, 200)].map((p) => p.join("").trimEnd());
  jobs.report = parts.join("\n");
  // Once the final text's first part is posted, the bot's next posts wait (until the test lets them go).
  let armed = false;
  const onResponse = (r: { method: string; route: string | null; status: number; body: unknown }) => {
    if (!armed || r.method !== "POST" || r.route !== "/messages" || r.status !== 200) return;
    const id = (r.body as { id: number }).id;
    if (up!.sandbox.control.messages().find((m) => m.id === id)?.content !== parts[0]) return;
    armed = false;
    up!.sandbox.control.delay(3_600_000, { paths: [/^\/messages$/] });
  };
  up = await startGatedDaemon({
    ...DAEMON,
    definition: ships,
    clock: new TestClock({ held: true }),
    onResponse,
  });
  const bot = up.running.daemon.bots[0]!;
  const { asked, dialog } = await answered(up, "report");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([false]);
  // Past the progress's finalAfterMs: its final text is posted anew.
  await up.clock.advance(1_000);
  await end(dialog);
  armed = true;
  jobs.work.resolve();
  await expect.poll(() => up!.sandbox.control.delayed(), { timeout: 15_000 }).toBe(1);
  await up.running.stop({ keepState: true, deadlineMs: 0 });
  // The second part, sent before the kill, is cut off with its connection: it never lands.
  up.sandbox.control.delay(0);
  await up.restart();
  await settled("hello");
  // Ended after the note is said: the parts not posted follow it, the failed note below the last.
  const ended = [parts[0], NOTE, parts[1], `${parts[2]}\n\n${FAILED_NOTE}`];
  expect(said()).toEqual([MOVED, "Report?\n1. yes\n2. no", ...ended, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
});

/** `n` words of nine characters, a space between two; the last one `last` characters long. */
const words = (n: number, last = 9) =>
  Array.from({ length: n }, (_, i) => `w${i}`.padEnd(i === n - 1 ? last : 9, "x")).join(" ");

/**
 * "roll" updating its progress to `Rolling back:`, `first` and `Done.` (paragraphs), whose second
 * message shows `tail`; the dialog ended, the run's edit ending it failed and the daemon killed,
 * then started again past its finalAfterMs: what the bot said, its text posted anew.
 */
async function rolledOverThenEnded(first: string, tail: string) {
  jobs.rolling = `Rolling back:\n\n${first}\n\nDone.`;
  jobs.rollFinalAfterMs = 60_000;
  up = await startGatedDaemon({ ...DAEMON, definition: ships, clock: new TestClock({ held: true }) });
  const { asked, dialog } = await answered(up, "roll");
  const rolledOver = async () => {
    // The rollover's post waits its turn (the pace, stretched a little by the calls made).
    if (up!.clock.pendingDelays().some((ms) => ms <= 5_000)) await up!.clock.advance(1_000);
    return said().includes(tail);
  };
  await expect.poll(rolledOver, { timeout: 15_000 }).toBe(true);
  const second = idOf(tail);
  await up.clock.advance(1_000);
  await end(dialog);
  jobs.work.resolve();
  // The run's edit ending it fails: tried again a second later, the daemon killed meanwhile.
  up.sandbox.control.failNext(1, { status: 500, methods: ["PATCH"], paths: [`/messages/${second}`] });
  await expect.poll(() => up!.running.logged("an edit failed; retrying").length, { timeout: 15_000 }).toBe(1);
  await up.running.stop({ keepState: true, deadlineMs: 0 });
  await up.restart(() => up!.clock.advance(120_000));
  await settled("hello");
  expect(acks(asked)).toEqual(["warning"]);
  return said();
}

it("a progress cut at a space into two messages, ended at the next start past its finalAfterMs: its text posted anew has that space, not a line break", async () => {
  // Its second paragraph ends past where the first message is cut (at its last space within the limit).
  const first = words(999);
  const said = await rolledOverThenEnded(first, `${first.slice(first.lastIndexOf(" ") + 1)}\n\nDone.`);
  const posted = ["Rolling back:", `${first}\n\nDone.`, FAILED_NOTE];
  expect(said).toEqual([MOVED, ROLL_Q, MOVED, NOTE, ...posted, "not a command: hello"]);
});

it("a progress cut at a line break into two messages, the second starting with a blank line's line break (the server drops it), ended the same way: its text posted anew keeps that paragraph break", async () => {
  // The blank line after its second paragraph straddles the limit: the cut falls between its two line breaks.
  const first = words(998, 14);
  expect(`Rolling back:\n\n${first}`.length).toBe(9_999);
  const said = await rolledOverThenEnded(first, "Done.");
  const posted = [`Rolling back:\n\n${first}`, `Done.\n\n${FAILED_NOTE}`];
  expect(said).toEqual([MOVED, ROLL_Q, MOVED, NOTE, ...posted, "not a command: hello"]);
});
