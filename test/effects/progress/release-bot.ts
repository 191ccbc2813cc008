/**
 * The release bot of the tests of a dialog's run stopped with a progress open
 * (progress-end-under-way.test.ts, progress-run-stopped.test.ts): its commands, what they wait
 * for, and what the tests read of a gated daemon running it.
 */
import { expect } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import { dialogDesk } from "../../../src/daemon/dialog-desk.ts";
import { deferred } from "../../support/deferred.ts";
import type { GatedDaemon } from "../../support/gated-daemon.ts";
import { botSaid } from "../../support/self-killing-bot.ts";
import { versions } from "./versions.ts";

export const BOT = "release-bot@sandbox.example";
export const NOTE = "An operator ended this conversation.";
export const FAILED_NOTE = "(failed: the work stopped before it finished)";
const ACK = { working: "eyes", done: "check", failed: "warning" };
const LONG = { ack: ACK, finalAfterMs: 3 * 3_600_000 };
const CHOICES = { choices: ["yes", "no"], timeout: "1h" };
export const SHIP_Q = "Ship?\n1. yes\n2. no";
export const SHIPPED = "Shipped; one more thing.";
export const TAG_Q = "Tag it?\n1. yes\n2. no";
export const DAEMON = { name: "releases", email: BOT, fullName: "Releases", extra: "handler_timeout: 1h" };

/**
 * What the commands wait for and how they go: `failing`, how many times "pack" fails; `updated`,
 * the code after an update ("roll"'s first question has another id and text, which stops a dialog
 * waiting at it); `work`, what the handlers wait for once their answer is taken, before their next question;
 * `rollFinalAfterMs`, the `finalAfterMs` of "roll"'s progress; `rolling`, the text it is updated to;
 * `report`, the final text of "report"'s progress; `endedNote`, the `endedNote` of "ship"'s and
 * "deliver"'s progresses (none by default).
 */
export const jobs = {
  failing: 0,
  updated: false,
  work: deferred(),
  rollFinalAfterMs: LONG.finalAfterMs,
  rolling: "Rolling…",
  report: "Reported.",
  endedNote: undefined as string | undefined,
};

/** The options of "ship"'s and "deliver"'s progresses. */
const endable = () => ({ ...LONG, ...(jobs.endedNote !== undefined && { endedNote: jobs.endedNote }) });

/** Every job as it was (a test's cleanup). */
export function resetJobs(): void {
  jobs.failing = 0;
  jobs.updated = false;
  jobs.rollFinalAfterMs = LONG.finalAfterMs;
  jobs.rolling = "Rolling…";
  jobs.report = "Reported.";
  jobs.endedNote = undefined;
  jobs.work.resolve();
  jobs.work = deferred();
}

export const ships = defineBot({
  setup(bot) {
    // The progress is opened by the run the answer began.
    bot.command("ship", async (ctx) => {
      await ctx.prompt("Ship?", CHOICES);
      const progress = await ctx.progress("Shipping…", endable());
      await jobs.work.promise;
      await ctx.reply(SHIPPED);
      await ctx.prompt("Tag it?", CHOICES);
      await progress.done("Shipped and tagged.");
    });
    // The progress is opened before the first question, and updated by the run the answer began.
    bot.command("roll", async (ctx) => {
      const progress = await ctx.progress("Roll: waiting for approval…", {
        ...LONG,
        finalAfterMs: jobs.rollFinalAfterMs,
      });
      if (jobs.updated) await ctx.prompt("Roll it?", { ...CHOICES, id: "roll-2" });
      else await ctx.prompt("Roll?", CHOICES);
      progress.update(jobs.rolling);
      await jobs.work.promise;
      await ctx.prompt("Tag it?", CHOICES);
      await progress.done("Rolled.");
    });
    // The progress is opened before the first question; the run the answer began finishes it with
    // `jobs.report`, posted anew (its work took longer than its finalAfterMs), then asks again.
    bot.command("report", async (ctx) => {
      const progress = await ctx.progress("Report: waiting for approval…", { ...LONG, finalAfterMs: 0 });
      await ctx.prompt("Report?", CHOICES);
      await jobs.work.promise;
      await progress.done(jobs.report);
      await ctx.prompt("Tag it?", CHOICES);
    });
    // The run the answer began opens a progress, then fails `failing` times: it runs again after a pause.
    bot.command("pack", async (ctx) => {
      await ctx.prompt("Pack?", CHOICES);
      await ctx.progress("Packing…", LONG);
      if (jobs.failing-- > 0) throw new Error("the packer is down");
      await ctx.prompt("Tag it?", CHOICES);
    });
    // The run the answer began opens a progress and finishes it: the dialog's last run, no question after it.
    bot.command("deliver", async (ctx) => {
      await ctx.prompt("Deliver?", CHOICES);
      const progress = await ctx.progress("Delivering…", endable());
      await jobs.work.promise;
      await progress.done("Delivered.");
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

/**
 * `command` asked of the bot `up` runs and its question answered "yes" once it waits for it:
 * the asker's message and the dialog's id.
 */
export async function answered(up: GatedDaemon, command: string): Promise<{ asked: number; dialog: string }> {
  const bot = up.running.daemon.bots[0]!;
  const asked = up.dm(command);
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  const dialog = bot.dialogs()[0]!.id;
  up.dm("yes");
  return { asked, dialog };
}

/** What the tests read and do on the daemon `up()` gives (the one started last). */
export function releaseViews(up: () => GatedDaemon) {
  const said = () => botSaid(up().sandbox, BOT);
  const acks = (message: number) =>
    (up().sandbox.control.messageView(message)!.reactions as { emoji_name: string }[]).map(
      (r) => r.emoji_name,
    );
  const idOf = (content: string) =>
    up()
      .sandbox.control.messages()
      .find((m) => m.content === content)!.id as number;
  const content = (id: number) =>
    up()
      .sandbox.control.messages()
      .find((m) => m.id === id)?.content;
  const end = (id: string) => dialogDesk(up().running.daemon.bots).endDialog("releases", id, NOTE);
  /** A wait of a second or less is booked (a progress's edit due, or tried again). */
  const shortWait = () =>
    up()
      .clock.pendingDelays()
      .some((ms) => ms <= 1_000);

  /**
   * A later message answered: everything before it in the conversation is done. A progress's edit
   * waiting for its pace (a second after the last) is let through: the clock moves a second then.
   */
  async function settled(word: string) {
    up().dm(word);
    const answered = async () => {
      if (shortWait()) await up().clock.advance(1_000);
      return said().includes(`not a command: ${word}`);
    };
    await expect.poll(answered, { timeout: 15_000 }).toBe(true);
  }

  /**
   * Killed with the edit of `progress` (showing `shown`) failed once (tried again a second later):
   * the next start ends it; the bot then said `all`.
   */
  async function killedThenStarted(asked: number, progress: number, all: string[], shown = "Shipping…") {
    const logged = (line: string) => up().running.logged(line);
    await expect.poll(() => logged("an edit failed; retrying"), { timeout: 15_000 }).toHaveLength(1);
    await up().running.stop({ keepState: true, deadlineMs: 0 });
    expect([content(progress), acks(asked)]).toEqual([shown, ["eyes"]]);
    await up().restart();
    await settled("hello");
    await expect.poll(() => content(progress), { timeout: 15_000 }).toBe(FAILED_NOTE);
    expect(said()).toEqual([...all, "not a command: hello"]);
    expect(acks(asked)).toEqual(["warning"]);
    expect(versions(up().sandbox, progress)).toEqual([shown, FAILED_NOTE]);
  }

  return { said, acks, idOf, content, end, shortWait, settled, killedThenStarted };
}
