/**
 * A bot stopped in a running daemon (as a lost lease stops it) while a dialog's answer was being
 * handled: nothing runs that dialog until the bot's next start, and the status (its JSON, its text,
 * the status page) and `bothost dialogs` say so, in the words `bothost dialogs` uses without a
 * daemon, not "being handled". A real daemon in this process against the sandbox over HTTP.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { formatStatus } from "../../src/cli/status.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { renderStatusPage } from "../../src/http/status-page.ts";
import { deferred } from "../support/deferred.ts";
import { type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "tally-bot@sandbox.example";
const NEXT = "answer or deadline recorded: runs at the next start";

/** Holds the run the answer started, past the bot's stop. */
const slow = deferred();

const tally = defineBot({
  setup(bot) {
    bot.command("tally", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await slow.promise;
      await ctx.reply(`One ${size.text}.`);
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(async () => {
  slow.resolve();
  await up?.close();
});

it("lists the dialog of a stopped bot whose answer is recorded as run at the next start", async () => {
  up = await startGatedDaemon({
    name: "tally",
    email: BOT,
    fullName: "Tally",
    definition: tally,
    extra: "handler_timeout: 1h",
  });
  const { running } = up;
  const bot = running.daemon.bots[0]!;
  up.dm("tally");
  expect(await saidAtLeast(up.sandbox, BOT, 1)).toEqual(["Which size?"]);
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  up.dm("large");
  // The run that took "large" is under way: being handled while the bot runs.
  await expect
    .poll(() => bot.dialogs().map((d) => [d.deadline, d.nextStart]))
    .toEqual([[undefined, undefined]]);
  // Stopped alone, its run cut off (as a lost lease stops it): the daemon goes on.
  await bot.stop(0, "its lease was lost");
  const status = await running.daemon.status();
  const [shown] = status.bots;
  expect(shown!.state).toBe("stopped");
  expect(shown!.dialogs.list.map((d) => d.nextStart)).toEqual([true]);
  expect(formatStatus(status)).toContain(`(${NEXT})`);
  expect(formatStatus(status)).not.toContain("being handled");
  expect(renderStatusPage(status)).toContain(`, ${NEXT}</li>`);
  expect(dialogDesk(running.daemon.bots).dialogs()).toMatchObject([
    { bot: "tally", stopped: true, dialogs: [{ nextStart: true }] },
  ]);
});
