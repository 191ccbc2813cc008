/**
 * A progress open across a prompt ("Deploy: waiting for approval…", 👀 on the asker's message)
 * whose dialog an operator ends (`bothost dialogs end`): no handler runs again, yet the progress
 * ends as failed once the end is kept (the failed note, the `failed` reaction in place of
 * `working`), once; also when its edit fails and the daemon is killed before it got through (the
 * next start ends it, the person's note not said twice). A progress its handler finished before
 * the question is left as it ended; one given an `endedNote` ends with it. Before, the progress kept
 * its placeholder and 👀 for good.
 * A real daemon in this process against the sandbox over HTTP, on a clock that stands still
 * between the test's moves.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import { dialogDesk } from "../../../src/daemon/dialog-desk.ts";
import type { InProcessDaemon } from "../../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../../support/gated-daemon.ts";
import { botSaid } from "../../support/self-killing-bot.ts";

const BOT = "release-bot@sandbox.example";
const NOTE = "An operator ended this conversation.";
const FAILED_NOTE = "(failed: the work stopped before it finished)";
const ENDED_NOTE = "(ended by an operator: whether the deploy ran is not known here)";
const PLACEHOLDER = "Deploy: waiting for approval…";
const ACK = { working: "eyes", done: "check", failed: "warning" };
const DEPLOY_Q = "Deploy?\n1. approve\n2. reject";

const deploys = defineBot({
  setup(bot) {
    bot.command("deploy", async (ctx) => {
      const progress = await ctx.progress(PLACEHOLDER, { ack: ACK, finalAfterMs: 3 * 3_600_000 });
      const decision = await ctx.prompt("Deploy?", { choices: ["approve", "reject"], timeout: "1h" });
      await progress.done(`Deploy ${decision.value}d.`);
    });
    bot.command("ship", async (ctx) => {
      const progress = await ctx.progress(PLACEHOLDER, {
        ack: ACK,
        finalAfterMs: 3 * 3_600_000,
        endedNote: ENDED_NOTE,
      });
      const decision = await ctx.prompt("Deploy?", { choices: ["approve", "reject"], timeout: "1h" });
      await progress.done(`Deploy ${decision.value}d.`);
    });
    bot.command("build", async (ctx) => {
      const progress = await ctx.progress("Building…", { ack: ACK, finalAfterMs: 3 * 3_600_000 });
      await progress.done("Built.");
      await ctx.prompt("Deploy it?", { choices: ["yes", "no"], timeout: "1h" });
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let up: GatedDaemon | undefined;
let running: InProcessDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

/** The bot running, asked `command` by the member: its progress and its question out, the dialog waiting. */
async function asked(command: string) {
  up = await startGatedDaemon({
    name: "releases",
    email: BOT,
    fullName: "Releases",
    definition: deploys,
    extra: "handler_timeout: 1h",
    clock: new TestClock({ held: true }),
  });
  ({ running } = up);
  const message = up.dm(command);
  await expect.poll(() => botSaid(up!.sandbox, BOT).length, { timeout: 15_000 }).toBe(2);
  const bot = running.daemon.bots[0]!;
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  const progress = up.sandbox.control
    .messages()
    .find((m) => m.content === PLACEHOLDER || m.content === "Built.")!;
  return { message, progress: progress.id as number, dialog: bot.dialogs()[0]!.id };
}

const acks = (message: number) =>
  (up!.sandbox.control.messageView(message)!.reactions as { emoji_name: string }[]).map((r) => r.emoji_name);
const content = (id: number) => up!.sandbox.control.messages().find((m) => m.id === id)?.content;
const end = (id: string) => dialogDesk(running!.daemon.bots).endDialog("releases", id, NOTE);

/** A later message answered: everything before it in the conversation is done. */
async function settled(word: string) {
  up!.dm(word);
  await expect
    .poll(() => botSaid(up!.sandbox, BOT).includes(`not a command: ${word}`), { timeout: 15_000 })
    .toBe(true);
}

it("an operator's end of a dialog waiting with a progress open ends the progress as failed, once", async () => {
  const { message, progress, dialog } = await asked("deploy");
  expect(acks(message)).toEqual(["eyes"]);
  await end(dialog);
  await settled("hello");
  expect(botSaid(up!.sandbox, BOT)).toEqual([FAILED_NOTE, DEPLOY_Q, NOTE, "not a command: hello"]);
  expect(acks(message)).toEqual(["warning"]);
  expect(content(progress)).toBe(FAILED_NOTE);
});

it("a progress given an endedNote ends with it, not its failedNote, when an operator ends its dialog", async () => {
  const { message, progress, dialog } = await asked("ship");
  await end(dialog);
  await settled("hello");
  expect(botSaid(up!.sandbox, BOT)).toEqual([ENDED_NOTE, DEPLOY_Q, NOTE, "not a command: hello"]);
  expect(acks(message)).toEqual(["warning"]);
  expect(content(progress)).toBe(ENDED_NOTE);
});

it("a progress whose edit fails, the daemon killed before it got through: the next start ends it, the note said once", async () => {
  const { message, progress, dialog } = await asked("deploy");
  // The first edit fails, and so does the next start's first: each is tried again a second later.
  up!.sandbox.control.failNext(2, { status: 500, methods: ["PATCH"], paths: [`/messages/${progress}`] });
  await end(dialog);
  await expect.poll(() => botSaid(up!.sandbox, BOT).includes(NOTE), { timeout: 15_000 }).toBe(true);
  await expect.poll(() => running!.logged("an edit failed; retrying"), { timeout: 15_000 }).toHaveLength(1);
  // Killed: the runs still under way are cut off.
  await running!.stop({ keepState: true, deadlineMs: 0 });
  expect(running!.logged("could not end a progress of an ended dialog")).toHaveLength(1);
  expect(content(progress)).toBe(PLACEHOLDER);
  expect(acks(message)).toEqual(["eyes"]);
  running = await up!.restart();
  await expect.poll(() => running!.logged("an edit failed; retrying"), { timeout: 15_000 }).toHaveLength(1);
  await up!.clock.advance(1_000);
  await settled("hello");
  expect(botSaid(up!.sandbox, BOT)).toEqual([FAILED_NOTE, DEPLOY_Q, NOTE, "not a command: hello"]);
  expect(acks(message)).toEqual(["warning"]);
});

it("a progress its handler finished before the question is left as it ended", async () => {
  const { message, progress, dialog } = await asked("build");
  expect(acks(message)).toEqual(["check"]);
  await end(dialog);
  await settled("hello");
  expect(botSaid(up!.sandbox, BOT)).toEqual([
    "Built.",
    "Deploy it?\n1. yes\n2. no",
    NOTE,
    "not a command: hello",
  ]);
  expect(acks(message)).toEqual(["check"]);
  expect(content(progress)).toBe("Built.");
});
