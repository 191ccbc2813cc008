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
import { DAEMON, FAILED_NOTE, jobs, NOTE, releaseViews, resetJobs, ships } from "./release-bot.ts";

const MOVED = "(finished: see below)";

let up: GatedDaemon | undefined;
afterEach(async () => {
  resetJobs();
  await closeGatedDaemon(up);
});

const { said, acks, end, settled } = releaseViews(() => up!);

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
  const asked = up.dm("report");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  const dialog = bot.dialogs()[0]!.id;
  up.dm("yes");
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
