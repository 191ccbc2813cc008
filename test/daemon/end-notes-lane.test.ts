/**
 * The notes of dialogs ended while they could not be said, said at the bot's next start, are work
 * no person waits on: their sends wait for the account's budget in the background lane, so a
 * person writing to the bot while they wait has their reply pass them. A daemon in this process
 * against the sandbox over HTTP, its rate limits on at the restart (2 calls a minute, the client
 * planning with the same), on a held test clock (the budget's pacing moves only with it).
 *
 * The bot's catch-up is off (`replay.max_messages: 0`): the catch-up's reads wait in the background
 * lane too, behind the notes queued before them, and the start waits for its catch-up before it
 * polls, so with it on a message sent meanwhile would reach the bot only once every note was said.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "noting-bot@sandbox.example";
const NOTES = 6;
const ENDED = "could not tell the person their dialog ended";
let up: GatedDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

let liveAsked = false;
const noting = defineBot({
  setup(bot) {
    bot.on("message", async (ctx) => {
      if (ctx.text === "live") {
        liveAsked = true;
        await ctx.reply("ack live");
        return;
      }
      await ctx.prompt("Which colour?", { timeout: "1h" });
    });
  },
});

/** Move the held clock a second at a time, letting the calls under way go on between, until `done`. */
async function advanceUntil(up: GatedDaemon, done: () => boolean): Promise<void> {
  await expect
    .poll(
      async () => {
        if (!done()) await up.clock.advance(1_000);
        return done();
      },
      { timeout: 15_000, interval: 2 },
    )
    .toBe(true);
}

it("a person writing while the notes said at a start wait for the budget is answered before them", async () => {
  const options = {
    name: "noting",
    email: BOT,
    fullName: "Noting",
    definition: noting,
    extra: "handler_timeout: 1h\nreplay: { max_messages: 0 }",
    clock: new TestClock({ held: true }),
  };
  up = await startGatedDaemon(options);
  const { sandbox } = up;
  for (let i = 0; i < NOTES; i++) {
    sandbox.control.createUser({ email: `p${i}@sandbox.example`, full_name: `P${i}` });
    sandbox.control.sendAs(`p${i}@sandbox.example`, { type: "direct", to: [BOT], content: "ask" });
  }
  const bot = up.running.daemon.bots[0]!;
  await expect.poll(() => botSaid(sandbox, BOT).length, { timeout: 15_000 }).toBe(NOTES);
  await expect.poll(() => bot.dialogs().length, { timeout: 15_000 }).toBe(NOTES);
  // Ended by an operator, each note refused (not a 400: kept), so left to the next start.
  sandbox.control.failNext(NOTES, { status: 403, methods: ["POST"], paths: ["/messages"] });
  const desk = dialogDesk(up.running.daemon.bots);
  for (const [i, dialog] of bot.dialogs().entries()) await desk.endDialog("noting", dialog.id, `note ${i}`);
  await expect.poll(() => up!.running.logged(ENDED).length, { timeout: 15_000 }).toBe(NOTES);
  options.extra += "\nrate_limit: { per_minute: 2, per_hour: 2000 }";
  sandbox.control.setUserRateLimit(BOT, [
    [60, 2],
    [3600, 2000],
  ]);
  // The start's own calls (its server check, the registration) wait for the budget too.
  let started = false;
  const restarted = up
    .restart(() => up!.clock.advance(61_000), { deadlineMs: 0 })
    .finally(() => {
      started = true;
    });
  await advanceUntil(up, () => started);
  await restarted;
  const notes = () => botSaid(sandbox, BOT).filter((text) => text.startsWith("note "));
  // Some notes are left to say when the person writes.
  const notesBefore = notes().length;
  expect(notesBefore).toBeLessThan(NOTES - 2);
  sandbox.control.createUser({ email: "other@sandbox.example", full_name: "Other" });
  sandbox.control.sendAs("other@sandbox.example", { type: "direct", to: [BOT], content: "live" });
  await advanceUntil(up, () => liveAsked);
  expect(liveAsked).toBe(true);
  // Notes said by the time the handler ran (a loaded machine may let a minute pass before the
  // message is read): the answer waits for at most the next minute's 2 calls after them.
  const notesAtAsk = notes().length;
  const said = () => botSaid(sandbox, BOT).filter((text) => text !== "Which colour?");
  await advanceUntil(up, () => said().length === NOTES + 1);
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(NOTES + 1);
  // The live answer is among the calls of the minute after it was asked (the budget's 2), not
  // after the last note.
  expect(said().indexOf("ack live")).toBeLessThanOrEqual(notesAtAsk + 2);
  expect(said().indexOf("ack live")).toBeLessThan(NOTES);
});
