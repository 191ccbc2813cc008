/**
 * An operator's end whose note could not be said (the server failed its send), the bot then down
 * longer than a week: at its next start the person is told the note, once, and the progress the
 * dialog left open ends as failed. Before, the ended dialog's header (where the note waits until
 * it is said) expired 7 days after the end: the note was never said and the progress kept its
 * placeholder and 👀 for good. Once said, the header goes 7 days later as before. A note the server
 * refuses for good (a 400) is dropped with a warning, not kept for ever: its progress ends at once.
 * A real daemon in this process against the sandbox over HTTP, on a clock that stands still between
 * the test's moves.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { NOTE_REFUSED } from "../../src/pipeline/dialogs/end-notes.ts";
import { closeGatedDaemon, type GatedDaemon } from "../support/gated-daemon.ts";
import { type HeldRelease, startHeldRelease } from "../support/held-release.ts";

const DAY = 86_400_000;
const NOTE = "An operator ended this conversation.";
const PLACEHOLDER = "Deploy: waiting for approval…";
const FAILED_NOTE = "(failed: the work stopped before it finished)";
const DEPLOY_Q = "Deploy?\n1. approve\n2. reject";

const deploys = defineBot({
  setup(bot) {
    bot.command("deploy", async (ctx) => {
      const progress = await ctx.progress(PLACEHOLDER, {
        ack: { working: "eyes", failed: "warning" },
        finalAfterMs: 60 * DAY,
      });
      const decision = await ctx.prompt("Deploy?", { choices: ["approve", "reject"], timeout: "30d" });
      await progress.done(`Deploy ${decision.value}d.`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let bot: HeldRelease | undefined;
let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

const said = () => bot!.said();

/** The deploy bot asked to deploy: its progress and question out, the dialog waiting. */
async function waiting() {
  bot = await startHeldRelease(deploys);
  up = bot.up;
  const asked = up.dm("deploy");
  await expect.poll(() => said(), { timeout: 15_000 }).toEqual([PLACEHOLDER, DEPLOY_Q]);
  const progress = up.sandbox.control.messages().find((m) => m.content === PLACEHOLDER)!.id as number;
  const running = up.running.daemon.bots[0]!;
  await expect.poll(() => running.dialogs().length, { timeout: 15_000 }).toBe(1);
  return { asked, progress, running };
}

/** The operator ends the dialog, the note's send answered `status` (once): the end is kept. */
async function endedWith(
  running: Awaited<ReturnType<typeof waiting>>["running"],
  status: number,
  line: string,
) {
  up!.sandbox.control.failNext(1, { status, methods: ["POST"], paths: ["/messages"] });
  await dialogDesk(up!.running.daemon.bots).endDialog("releases", running.dialogs()[0]!.id, NOTE);
  await expect.poll(() => up!.running.logged(line), { timeout: 15_000 }).toHaveLength(1);
  expect(running.dialogs()).toEqual([]);
}

/** After a restart `days` later, a later message answered: the start's work is done. */
async function startedAfter(days: number, word: string) {
  await up!.restart(() => up!.clock.advance(days * DAY));
  up!.dm(word);
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe(`not a command: ${word}`);
}

it("a note not said before the bot was down for 8 days is said at its start, once, and its progress ended", async () => {
  const { asked, progress, running } = await waiting();
  await endedWith(running, 500, "could not tell the person their dialog ended");
  await startedAfter(8, "hello");
  expect(said()).toEqual([FAILED_NOTE, DEPLOY_Q, NOTE, "not a command: hello"]);
  expect(bot!.content(progress)).toBe(FAILED_NOTE);
  expect(bot!.acks(asked)).toEqual(["warning"]);
  // Said: not said again (the header, kept a week more to refuse a late write, holds no note).
  await startedAfter(8, "bye");
  expect(said().filter((s) => s === NOTE)).toHaveLength(1);
});

it("a note the server refuses for good is dropped, logged, its progress ended at once", async () => {
  const { asked, progress, running } = await waiting();
  await endedWith(running, 400, NOTE_REFUSED);
  // Its end is an edit, then the reactions swapped: both waited for.
  await expect
    .poll(() => [bot!.content(progress), bot!.acks(asked)], { timeout: 15_000 })
    .toEqual([FAILED_NOTE, ["warning"]]);
  await startedAfter(1, "hello");
  expect(said()).toEqual([FAILED_NOTE, DEPLOY_Q, "not a command: hello"]);
  expect(up!.running.logged("their dialog ended")).toEqual([]);
});
