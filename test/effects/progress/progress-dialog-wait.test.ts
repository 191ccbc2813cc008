/**
 * A dialog waits longer than the bot's effect records live (25 hours by default): its replay
 * finds what its earlier runs made in the dialog's log, not in those records. A progress finished
 * between two questions is not finished again when the second is answered two days later (its
 * result posted once), nor overwritten as failed when an operator ends the dialog then; a reply and a
 * progress's edit made before a question are not made again either; `back` to the first question
 * drops the steps made after it, and the new answer finishes the progress again. Before, the
 * progress's steps after its first post were only in the effect records: once they expired, the
 * replay posted the result a second time, and an operator's end posted the failed note under the
 * finished progress. A real daemon in this process against the sandbox over HTTP, on a clock that
 * stands still between the test's moves.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import { dialogDesk } from "../../../src/daemon/dialog-desk.ts";
import { closeGatedDaemon, type GatedDaemon } from "../../support/gated-daemon.ts";
import { type HeldRelease, startHeldRelease } from "../../support/held-release.ts";

const DAY = 86_400_000;
const NOTE = "An operator ended this conversation.";
const ACK = { working: "eyes", done: "check", failed: "warning" };
const SHIP_Q = "Ship it?\n1. yes\n2. no";

const releases = defineBot({
  setup(bot) {
    bot.command("release", async (ctx) => {
      const progress = await ctx.progress("Release: preparing…", { ack: ACK });
      const version = await ctx.prompt("Which version?", { timeout: "30d" });
      await progress.done(`Release ${version.text} prepared.`);
      const go = await ctx.prompt("Ship it?", { choices: ["yes", "no"], timeout: "30d" });
      await ctx.reply(`Shipping ${version.text}: ${go.value}`);
    });
    bot.command("deploy", async (ctx) => {
      await ctx.reply("Deploy requested.");
      const progress = await ctx.progress("Deploy: waiting for approval…", {
        ack: ACK,
        finalAfterMs: 60 * DAY,
      });
      progress.update("Deploy: built, waiting for approval…");
      const go = await ctx.prompt("Deploy?", { choices: ["yes", "no"], timeout: "30d" });
      await progress.done(`Deploy: ${go.value}.`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let bot: HeldRelease | undefined;
let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

const said = () => bot!.said();
const content = (id: number) => bot!.content(id);
const acks = (message: number) => bot!.acks(message);

/** The bot asked `command`: once it said `count` things. */
async function started(command: string, count: number) {
  bot = await startHeldRelease(releases);
  up = bot.up;
  const asked = up.dm(command);
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(count);
  return asked;
}

/** A later message answered: everything before it in the conversation is done. */
async function settled(word: string) {
  up!.dm(word);
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe(`not a command: ${word}`);
}

/** The release's first question answered a minute later: its progress finished, the second question out. */
async function atSecondQuestion() {
  const asked = await started("release", 2);
  await up!.clock.advance(60_000);
  up!.dm("1.4");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe(SHIP_Q);
  // Past 30 s of work, the result was posted anew and the first message points to it.
  expect(said()).toEqual(["(finished: see below)", "Which version?", "Release 1.4 prepared.", SHIP_Q]);
  expect(acks(asked)).toEqual(["check"]);
  await up!.clock.advance(2 * DAY);
  return asked;
}

it("a progress finished between two questions, the second answered two days later: its result is posted once", async () => {
  const asked = await atSecondQuestion();
  up!.dm("yes");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe("Shipping 1.4: yes");
  expect(said()).toEqual([
    "(finished: see below)",
    "Which version?",
    "Release 1.4 prepared.",
    SHIP_Q,
    "Shipping 1.4: yes",
  ]);
  expect(acks(asked)).toEqual(["check"]);
});

it("an operator's end a day after a progress finished between two questions leaves it as it ended", async () => {
  const asked = await atSecondQuestion();
  const bot = up!.running.daemon.bots[0]!;
  const dialog = bot.dialogs()[0]!.id;
  await dialogDesk(up!.running.daemon.bots).endDialog("releases", dialog, NOTE);
  await settled("hello");
  const first = up!.sandbox.control.messages().find((m) => m.content === "(finished: see below)");
  expect(first).toBeDefined();
  expect(said()).toEqual([
    "(finished: see below)",
    "Which version?",
    "Release 1.4 prepared.",
    SHIP_Q,
    NOTE,
    "not a command: hello",
  ]);
  expect(acks(asked)).toEqual(["check"]);
});

it("a reply and a progress's edit made before a question answered two days later are not made again", async () => {
  const asked = await started("deploy", 3);
  await expect.poll(() => said()[1], { timeout: 15_000 }).toBe("Deploy: built, waiting for approval…");
  const progress = up!.sandbox.control.messages().find((m) => String(m.content).startsWith("Deploy:"))!;
  await up!.clock.advance(2 * DAY);
  up!.dm("yes");
  await expect.poll(() => content(progress.id as number), { timeout: 15_000 }).toBe("Deploy: yes.");
  await settled("hello");
  expect(said()).toEqual([
    "Deploy requested.",
    "Deploy: yes.",
    "Deploy?\n1. yes\n2. no",
    "not a command: hello",
  ]);
  expect(acks(asked)).toEqual(["check"]);
});

it("back at the second question asks the first again: the progress is finished again with the new answer", async () => {
  const asked = await atSecondQuestion();
  up!.dm("back");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe("Which version?");
  await up!.clock.advance(60_000);
  up!.dm("1.5");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe(SHIP_Q);
  up!.dm("no");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe("Shipping 1.5: no");
  expect(said()).toEqual([
    "(finished: see below)",
    "Which version?",
    "Release 1.4 prepared.",
    SHIP_Q,
    "Which version?",
    "Release 1.5 prepared.",
    SHIP_Q,
    "Shipping 1.5: no",
  ]);
  expect(acks(asked)).toEqual(["check"]);
});
