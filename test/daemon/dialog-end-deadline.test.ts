/**
 * An operator ends a dialog while its question's deadline passes: the deadline's turn, queued
 * behind a slow command in the dialog's conversation before the end came, runs while the end is
 * under way: its write held (a store slow to answer), or refused once and tried again (the
 * dialog ending between the tries, the deadline not recorded). Either way the person is told the note, and the prompt's
 * timeout branch does not run: the dialog's run of the deadline is queued behind the end's turn,
 * which ends it first. A real daemon in this process on a clock that stands still between the
 * test's moves, against the sandbox over HTTP; the dialogs' writes pass a gate. So does a
 * message of the person's in a channel topic the question waits in (`where`), queued behind the
 * slow command before the end came: it finds the dialog ending and runs nothing of it (the
 * timeout branch would end the dialog first, the operator told there is no such dialog).
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { deferred } from "../support/deferred.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";

const BOT = "desk-bot@sandbox.example";
const NOTE = "An operator ended this conversation.";
const HOUR = 3_600_000;
const TOPIC = { channel: "general", topic: "orders" };

/** What `help` waits for before it answers. */
let slow = deferred();

const desk = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "1h" }).catch(() => undefined);
      await ctx.reply(size === undefined ? "Timed out." : `${size.text}, noted.`);
    });
    bot.command("topic", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "1h", where: TOPIC }).catch(() => undefined);
      await ctx.reply(size === undefined ? "Timed out." : `${size.text}, noted.`);
    });
    bot.command("help", async (ctx) => {
      await slow.promise;
      await ctx.reply("help: order");
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let up: GatedDaemon | undefined;
let gate: StoreGate | undefined;
afterEach(() => {
  slow.resolve();
  slow = deferred();
  gate?.open();
  return closeGatedDaemon(up);
});

const userId = (email: string) => up!.sandbox.control.users().find((u) => u.email === email)!.user_id;
/** What the bot said in the direct messages, oldest first. */
const said = () =>
  up!.sandbox.control
    .messages()
    .filter((m) => m.sender_id === userId(BOT))
    .map((m) => String(m.content).split("\n")[0]!);

const inTopic = (content: string) =>
  up!.sandbox.control.sendAs("member@sandbox.example", {
    type: "stream",
    to: TOPIC.channel,
    topic: TOPIC.topic,
    content,
  }).id;

/**
 * The bot asked "order" (`where`: "topic", asked in the orders topic), then ran a slow `help`
 * where the question waits; the question's deadline passed meanwhile.
 */
async function dueBehindHelp(where: "dm" | "topic" = "dm") {
  gate = new StoreGate();
  const clock = new TestClock({ held: true });
  up = await startGatedDaemon({
    extra: "handler_timeout: 2h",
    name: "desk",
    email: BOT,
    fullName: "Desk",
    definition: desk,
    gate,
    clock,
    channels: ["general"],
  });
  const bot = up.running.daemon.bots[0]!;
  up.dm(where === "dm" ? "order" : "topic");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  const dialog = bot.dialogs()[0]!.id;
  // A command the question lets run while it waits, slow: the conversation is busy.
  if (where === "dm") up.dm("help");
  else inTopic("@**Desk** help");
  await expect.poll(() => bot.status.inFlight, { timeout: 15_000 }).toBe(1);
  // The deadline passes: its turn waits behind `help`.
  await clock.advance(HOUR + 1_000);
  return { bot, clock, end: () => dialogDesk(up!.running.daemon.bots).endDialog("desk", dialog, NOTE) };
}

/** The end's first write refused, tried again after a pause while `help` answers and the deadline's turn runs. */
async function triedAgain(end: () => Promise<unknown>, clock: TestClock) {
  gate!.mode = "fail";
  const ended = end();
  ended.catch(() => {});
  await gate!.stoppedAt(1);
  gate!.mode = "open";
  slow.resolve();
  await expect.poll(() => said().includes("help: order"), { timeout: 15_000 }).toBe(true);
  for (let s = 0; s < 8; s++) await clock.advance(250);
  return ended;
}

/** `help` answered, the end settled: a later message is an ordinary one, and the bot said `expected`. */
async function saidThen(ended: Promise<unknown>, expected: string[]) {
  await ended;
  up!.dm("hello");
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe("not a command: hello");
  expect(said()).toEqual([...expected, "not a command: hello"]);
  expect(up!.running.daemon.bots[0]!.dialogs()).toEqual([]);
}

it("the deadline passing while an operator's end is written: the note, and no timeout branch", async () => {
  const { end } = await dueBehindHelp();
  gate!.mode = "hang";
  const ended = end();
  ended.catch(() => {});
  await gate!.stoppedAt(1);
  // `help` answers; the deadline's turn runs while the end's write is held.
  slow.resolve();
  // Its record of the deadline held behind the end's.
  await gate!.stoppedAt(2);
  gate!.open();
  await saidThen(ended, ["Which size?", "help: order", NOTE]);
});

it("the deadline passing while an operator's end is tried again: the note, and no timeout branch", async () => {
  const { end, clock } = await dueBehindHelp();
  await saidThen(triedAgain(end, clock), ["Which size?", "help: order", NOTE]);
});

it("a message in the topic the question waits in, while an operator's end is tried again: no timeout branch", async () => {
  const { bot, end, clock } = await dueBehindHelp("topic");
  // The person's next message there, queued behind `help` and the deadline's turn.
  const received = bot.status.received;
  inTopic("@**Desk** hello");
  await expect.poll(() => bot.status.received, { timeout: 15_000 }).toBe(received + 1);
  await triedAgain(end, clock);
  // The message came before the end: an ordinary one, before the note.
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe(NOTE);
  expect(said()).toEqual(["Which size?", "help: order", "not a command: hello", NOTE]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
});
