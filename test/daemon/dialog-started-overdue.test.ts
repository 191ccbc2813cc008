/**
 * `ctx.startDialog` with someone whose earlier dialog in their direct messages is past its
 * deadline, its timeout not yet recorded: an hourly job caught up at a start after a downtime (a
 * daily standup's next day), the earlier question's deadline passed meanwhile. The earlier
 * dialog times out, then the new one begins: the person is asked. The deadline's write to the
 * dialogs' store is held until the job asked to start, so the start meets the earlier dialog
 * still waiting. A real daemon in this process on a held test clock against the sandbox over
 * HTTP, its dialogs' writes through a gate.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/pipeline/dialogs/prompt-error.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "standup-bot@sandbox.example";
const QUESTION = "What did you do yesterday?";
let member = 0;

const hourly = defineBot({
  setup(bot) {
    bot.cron("0 * * * *", { missed: "run-once" }, async (ctx) => {
      await ctx.users.get(member); // cached: the start below asks for nothing before its check
      ctx.log.info("starting");
      ctx.log.info({ started: await ctx.startDialog(member, "standup") }, "start made");
    });
    bot.command("standup", async (ctx) => {
      try {
        const done = await ctx.prompt(QUESTION, { timeout: "10m" });
        await ctx.reply(`Noted: ${done.text}`);
      } catch (err) {
        if (!(err instanceof PromptError)) throw err;
        await ctx.reply("No answer.");
      }
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

it("caught up at a start, the earlier question's deadline passed while down: the person is asked", async () => {
  const clock = new TestClock({ held: true, start: "2030-01-07T09:20:00Z" });
  const gate = new StoreGate();
  up = await startGatedDaemon({
    name: "standup",
    email: BOT,
    fullName: "Standup",
    definition: hourly,
    clock,
    gate,
  });
  member = up.sandbox.control.users().find((u) => u.email === "member@sandbox.example")!.user_id;
  const said = () => botSaid(up!.sandbox, BOT);
  up.dm("standup");
  await expect.poll(said).toEqual([QUESTION]);
  await up.restart(async () => {
    await clock.advance(3_600_000); // 10:20: the 10:00 run missed, the question's wait passed
    gate.mode = "hang";
  });
  // The deadline's write is held; the job's catch-up asks to start the new dialog meanwhile.
  await gate.stoppedAt(1);
  const logs = () => up!.running.logged("starting");
  await expect.poll(logs).toHaveLength(1);
  gate.open();
  await expect.poll(said).toEqual([QUESTION, "No answer.", QUESTION]);
  expect(up.running.logged("start made").map((l) => l.started)).toEqual([true]);
  up.dm("fixed the build");
  await expect.poll(said).toEqual([QUESTION, "No answer.", QUESTION, "Noted: fixed the build"]);
});
