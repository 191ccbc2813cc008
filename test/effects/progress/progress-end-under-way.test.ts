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
 * answer, left that progress open. A real daemon in this process against the sandbox over HTTP,
 * on a clock that stands still between the test's moves.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import { dialogDesk } from "../../../src/daemon/dialog-desk.ts";
import type { InProcessDaemon } from "../../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { deferred } from "../../support/deferred.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../../support/gated-daemon.ts";
import { StoreGate } from "../../support/gated-store.ts";
import { botSaid } from "../../support/self-killing-bot.ts";
import { versions } from "./versions.ts";

const BOT = "release-bot@sandbox.example";
const NOTE = "An operator ended this conversation.";
const FAILED_NOTE = "(failed: the work stopped before it finished)";
const ACK = { working: "eyes", done: "check", failed: "warning" };
const LONG = { ack: ACK, finalAfterMs: 3 * 3_600_000 };
const CHOICES = { choices: ["yes", "no"], timeout: "1h" };

/** How many times `pack` fails. */
let failing = 0;

/** What the handlers wait for once their answer is taken, before their next question. */
let work = deferred();

const ships = defineBot({
  setup(bot) {
    // The progress is opened by the run the answer began.
    bot.command("ship", async (ctx) => {
      await ctx.prompt("Ship?", CHOICES);
      const progress = await ctx.progress("Shipping…", LONG);
      await work.promise;
      await ctx.reply("Shipped; one more thing.");
      await ctx.prompt("Tag it?", CHOICES);
      await progress.done("Shipped and tagged.");
    });
    // The progress is opened before the first question, and updated by the run the answer began.
    bot.command("roll", async (ctx) => {
      const progress = await ctx.progress("Roll: waiting for approval…", LONG);
      await ctx.prompt("Roll?", CHOICES);
      progress.update("Rolling…");
      await work.promise;
      await ctx.prompt("Tag it?", CHOICES);
      await progress.done("Rolled.");
    });
    // The run the answer began opens a progress, then fails once: it runs again after a pause.
    bot.command("pack", async (ctx) => {
      await ctx.prompt("Pack?", CHOICES);
      await ctx.progress("Packing…", LONG);
      if (failing-- > 0) throw new Error("the packer is down");
      await ctx.prompt("Tag it?", CHOICES);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

const DAEMON = { name: "releases", email: BOT, fullName: "Releases", extra: "handler_timeout: 1h" };

let up: GatedDaemon | undefined;
let running: InProcessDaemon | undefined;
afterEach(() => {
  failing = 0;
  work.resolve();
  work = deferred();
  return closeGatedDaemon(up);
});

const said = () => botSaid(up!.sandbox, BOT);
const acks = (message: number) =>
  (up!.sandbox.control.messageView(message)!.reactions as { emoji_name: string }[]).map((r) => r.emoji_name);
const idOf = (content: string) =>
  up!.sandbox.control.messages().find((m) => m.content === content)!.id as number;
const end = (id: string) => dialogDesk(running!.daemon.bots).endDialog("releases", id, NOTE);

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
  const { daemon, bot } = await started();
  const asked = daemon.dm(command);
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  const dialog = bot.dialogs()[0]!.id;
  const answer = daemon.dm("yes");
  await expect.poll(() => said().includes(shown), { timeout: 15_000 }).toBe(true);
  return { asked, answer, dialog, progress: idOf(shown) };
}

/**
 * A later message answered: everything before it in the conversation is done. A progress's edit
 * waiting for its pace (a second after the last) is let through: the clock moves a second then.
 */
async function settled(word: string) {
  up!.dm(word);
  const answered = async () => {
    if (up!.clock.pendingDelays().some((ms) => ms <= 1_000)) await up!.clock.advance(1_000);
    return said().includes(`not a command: ${word}`);
  };
  await expect.poll(answered, { timeout: 15_000 }).toBe(true);
}

it("a progress the run under way opened ends as failed once its dialog is ended by an operator", async () => {
  const { asked, answer, dialog, progress } = await underWay("ship", "Shipping…");
  await expect.poll(() => acks(asked), { timeout: 15_000 }).toEqual(["eyes"]);
  await end(dialog);
  work.resolve();
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

it("a progress an earlier run opened, updated by the run under way, ends as failed once", async () => {
  const { asked, dialog } = await underWay("roll", "Roll: waiting for approval…");
  await expect.poll(() => said().includes("Rolling…"), { timeout: 15_000 }).toBe(true);
  const progress = idOf("Rolling…");
  await end(dialog);
  work.resolve();
  await settled("hello");
  const failed = `Rolling…\n\n${FAILED_NOTE}`;
  expect(said()).toEqual([failed, "Roll?\n1. yes\n2. no", NOTE, "not a command: hello"]);
  expect(acks(asked)).toEqual(["warning"]);
  expect(versions(up!.sandbox, progress)).toEqual(["Roll: waiting for approval…", "Rolling…", failed]);
  expect(running!.logged("could not")).toEqual([]);
});

it("a person's answer while an operator's end reads the dialog's record waits for the end: the note, then the answer as an ordinary message", async () => {
  const gate = new StoreGate();
  const { daemon, bot } = await started(gate);
  const asked = daemon.dm("ship");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  work.resolve();
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
  failing = 1;
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
