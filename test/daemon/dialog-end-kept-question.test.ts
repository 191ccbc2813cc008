/**
 * An operator ends a dialog while its run's next question is being recorded (a store slow to
 * answer), and the question is kept before the end: the end goes after it, and no answer is taken
 * for that question while the end is written. The person's reply to it in the channel topic where
 * it was asked (`where`), typed or pressed after the end began, waits for the end and is then an
 * ordinary event: before, it was taken as the answer, recorded before the end, and the run went on
 * and replied to it ("large red, noted there.") before the note. And an answer typed in the
 * dialog's own conversation before the end came, waiting there behind the run: an ordinary message
 * in its place there; before, it was recorded as the answer of the ended dialog and never
 * answered at all. A real daemon in this process on a clock that stands still between the test's
 * moves, against the sandbox over HTTP; the dialogs' writes pass a gate.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { deferred } from "../support/deferred.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";

const BOT = "desk-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const NOTE = "An operator ended this conversation.";
const TOPIC = { channel: "general", topic: "orders" };

/** What the runs wait for once their first answer is taken, before their next question. */
let work = deferred();

const desk = defineBot({
  setup(bot) {
    // The next question in the dialog's own conversation.
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await work.promise;
      const colour = await ctx.prompt(`${size.text}: which colour?`);
      await ctx.reply(`${size.text} ${colour.text}, noted.`);
    });
    // The next question in a channel topic, typed or pressed there (the first has buttons too: the
    // bot's queue takes reactions from the start, not from a new queue made while the test presses).
    bot.command("there", async (ctx) => {
      const size = await ctx.prompt("Which size?", { choices: { large: "check", small: "heart" } });
      await work.promise;
      const colour = await ctx.prompt(`${size.text}: which colour, there?`, {
        where: TOPIC,
        choices: { red: "heart", blue: "check" },
      });
      await ctx.reply(`${size.text} ${colour.value}, noted there.`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

/** The bot on a handler timeout longer than any case. */
const DAEMON = {
  extra: "handler_timeout: 1h",
  name: "desk",
  email: BOT,
  fullName: "Desk",
  channels: ["general"],
};

let up: GatedDaemon | undefined;
let gate: StoreGate | undefined;
afterEach(() => {
  work.resolve();
  work = deferred();
  gate?.open();
  return closeGatedDaemon(up);
});

const userId = (email: string) => up!.sandbox.control.users().find((u) => u.email === email)!.user_id;
/** What the bot said, oldest first: in the topic, or in the direct messages. */
function said(where: "topic" | "dm"): string[] {
  const mine = up!.sandbox.control.messages().filter((m) => m.sender_id === userId(BOT));
  const there = mine.filter((m) => (m.type === "stream") === (where === "topic"));
  return there.map((m) => String(m.content).split("\n")[0]!);
}
const end = (id: string) => dialogDesk(up!.running.daemon.bots).endDialog("desk", id, NOTE);
const deadlines = () => up!.running.daemon.bots[0]!.dialogs().map((d) => d.deadline !== undefined);

/**
 * The bot asked `command` and answered "large": its run's next question sent, its append held
 * by the gate; `before` done then; the operator's end begun, its write held too: the end.
 */
async function endWhileAsking(command: string, before?: () => Promise<void>) {
  gate = new StoreGate();
  up = await startGatedDaemon({ ...DAEMON, definition: desk, gate, clock: new TestClock({ held: true }) });
  up.dm(command);
  await expect.poll(deadlines, { timeout: 15_000 }).toEqual([true]);
  const dialog = up.running.daemon.bots[0]!.dialogs()[0]!.id;
  up.dm("large");
  await expect.poll(deadlines, { timeout: 15_000 }).toEqual([false]);
  gate.mode = "hang";
  work.resolve();
  await gate.stoppedAt(1);
  await before?.();
  const ended = end(dialog);
  ended.catch(() => {});
  await gate.stoppedAt(2);
  // The question lands; the end's write stays held.
  gate.release();
  return { ended };
}

/**
 * Once the person's reply there was matched with `inFlight` tasks in the bot's queue: taken as an
 * answer (its write held by the gate), or not taken (the question still waits). Then every write
 * goes through.
 */
async function matchedThen(ended: Promise<unknown>, inFlight: number) {
  const bot = up!.running.daemon.bots[0]!;
  await expect
    .poll(() => gate!.stopped >= 3 || (bot.status.inFlight === inFlight && deadlines()[0] === true), {
      timeout: 15_000,
    })
    .toBe(true);
  gate!.open();
  await ended;
}

/** A later direct message answered as an ordinary one: everything before it there is done. */
async function settled(word: string) {
  up!.dm(word);
  await expect.poll(() => said("dm").at(-1), { timeout: 15_000 }).toBe(`not a command: ${word}`);
}

it("the next question, asked in a channel topic, kept while the end is written: the reply typed there waits for the end, an ordinary message", async () => {
  const { ended } = await endWhileAsking("there");
  // Kept there, its run over: the end's turn alone is in flight.
  await expect.poll(() => [deadlines(), up!.running.daemon.bots[0]!.status.inFlight]).toEqual([[true], 1]);
  up!.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: TOPIC.channel,
    topic: TOPIC.topic,
    content: "red",
  });
  await matchedThen(ended, 2);
  await settled("hello");
  await expect.poll(() => said("topic").length + said("dm").length, { timeout: 15_000 }).toBe(5);
  expect([said("topic"), said("dm")]).toEqual([
    ["large: which colour, there?", "not a command: red"],
    ["Which size?", NOTE, "not a command: hello"],
  ]);
  expect(up!.running.daemon.bots[0]!.dialogs()).toEqual([]);
});

it("the next question, asked in a channel topic, kept while the end is written: a press on its button there is no answer", async () => {
  const { ended } = await endWhileAsking("there");
  await expect.poll(() => [deadlines(), up!.running.daemon.bots[0]!.status.inFlight]).toEqual([[true], 1]);
  const question = up!.sandbox.control.messages().find((m) => m.type === "stream")!.id as number;
  const api = createClient({
    url: up!.sandbox.url,
    email: MEMBER,
    apiKey: up!.sandbox.control.apiKeyOf(MEMBER),
  });
  await api.reactions.add(question, { emoji_name: "heart" });
  await matchedThen(ended, 2);
  await settled("hello");
  expect([said("topic"), said("dm")]).toEqual([
    ["large: which colour, there?"],
    ["Which size?", NOTE, "not a command: hello"],
  ]);
  expect(up!.running.daemon.bots[0]!.dialogs()).toEqual([]);
});

it("the next question kept while the end is written, an answer typed before the end waiting behind the run: an ordinary message in its place", async () => {
  const { ended } = await endWhileAsking("order", async () => {
    up!.dm("red");
    // Behind the run, in the direct messages' order.
    await expect.poll(() => up!.running.daemon.bots[0]!.status.inFlight).toBe(2);
  });
  // The run over, the answer matched: it and the end's turn in flight.
  await matchedThen(ended, 2);
  await settled("hello");
  expect(said("dm")).toEqual([
    "Which size?",
    "large: which colour?",
    "not a command: red",
    NOTE,
    "not a command: hello",
  ]);
  expect(up!.running.daemon.bots[0]!.dialogs()).toEqual([]);
});
