/**
 * A new dialog at the edge of another's end, its end's write slow (a store that holds it, as a
 * slow Redis does): an operator's end of a dialog, and a new request of its person there
 * meanwhile; a dialog's last reply said and its end not yet kept, and a new question asked there
 * from a direct message (`where`). The new one waits for the end, then is asked; the person reads
 * the end (its note) first. And either end written with its reply lost, the daemon cut off as a
 * crash cuts it while the new one waited: after the restart, the note, then the new one. And an
 * operator's end whose write the store holds past the handler timeout while a question asked
 * from a direct message waits for it: the run waits for the store, then asks after the note.
 * Before, each attempt was cut as a handler failure and the request ended as a dead letter. A
 * real daemon in this process on the test clock against the sandbox over HTTP; the dialogs'
 * writes pass a gate.
 */
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { PromptError } from "../../src/pipeline/dialogs/prompt-error.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";

const BOT = "desk-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const APPROVER = "owner@sandbox.example";
const NOTE = "An operator ended this conversation.";
const TOPIC = { channel: "general", topic: "orders" };

/** The approver's id, once the sandbox is up. */
let approver = 0;

/** The commands whose prompt was refused silently (asked from a direct message). */
const refused: string[] = [];

/**
 * A refused prompt (another dialog waits there), said (`said`), or only noted in {@link refused}
 * (`said` a command's name): its message is then handled, as any handled refusal leaves it.
 */
async function orRefused(said: ((text: string) => unknown) | string, ask: () => Promise<unknown>) {
  try {
    await ask();
  } catch (err) {
    if (!(err instanceof PromptError && err.code === "PROMPT_PENDING")) throw err;
    if (typeof said === "string") refused.push(said);
    else await said("another dialog waits there");
  }
}

const desk = defineBot({
  setup(bot) {
    bot.command("order", (ctx) =>
      orRefused(ctx.reply, async () => {
        const size = await ctx.prompt("Which size?");
        await ctx.reply(`${size.text}, noted.`);
      }),
    );
    // Asked from a direct message, in the orders topic.
    bot.command("there", (ctx) =>
      orRefused("there", async () => {
        const size = await ctx.prompt("Which size, from your message?", { where: TOPIC });
        await ctx.reply(`${size.text}, noted from there.`);
      }),
    );
    bot.command("deploy", { args: { service: z.string() } }, (ctx) =>
      orRefused(ctx.reply, async () => {
        const d = await ctx.prompt(`Deploy ${ctx.args.service}?`, {
          from: approver,
          choices: ["approve", "reject"],
        });
        await ctx.reply(`${d.value}d by ${d.by.name}.`);
      }),
    );
    bot.command("ask", (ctx) =>
      orRefused("ask", async () => {
        const d = await ctx.prompt("Deploy from your message?", {
          from: approver,
          choices: ["approve", "reject"],
          where: TOPIC,
        });
        await ctx.reply(`${d.value}d by ${d.by.name}, from there.`);
      }),
    );
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let up: GatedDaemon | undefined;
let gate: StoreGate | undefined;
afterEach(() => {
  refused.length = 0;
  gate?.open();
  return closeGatedDaemon(up);
});

const DAEMON = {
  name: "desk",
  email: BOT,
  fullName: "Desk",
  channels: ["general"],
};

/**
 * `held`: on a clock that stands still between the test's moves (a retry's pause never passes);
 * `timeout`: the handler timeout.
 */
async function start(held = false, timeout = "1h") {
  gate = new StoreGate();
  const clock = held ? new TestClock({ held: true }) : new TestClock();
  const extra = `handler_timeout: ${timeout}`;
  up = await startGatedDaemon({ ...DAEMON, extra, definition: desk, gate, clock });
  approver = idOf(APPROVER);
  return { bot: up.running.daemon.bots[0]! };
}

const idOf = (email: string) => up!.sandbox.control.users().find((u) => u.email === email)!.user_id;
const inTopic = (who: string, content: string) =>
  up!.sandbox.control.sendAs(who, { type: "stream", to: TOPIC.channel, topic: TOPIC.topic, content }).id;
/** What the bot said, oldest first: `where` "topic" or "dm". */
function said(where?: "topic" | "dm"): string[] {
  const mine = up!.sandbox.control.messages().filter((m) => m.sender_id === idOf(BOT));
  const there =
    where === undefined ? mine : mine.filter((m) => (m.type === "stream") === (where === "topic"));
  return there.map((m) => String(m.content));
}

/** The one dialog, once it waits at its question (its log kept). */
async function waiting(bot: GatedDaemon["running"]["daemon"]["bots"][number]) {
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  return bot.dialogs()[0]!;
}

const end = (id: string) => dialogDesk(up!.running.daemon.bots).endDialog("desk", id, NOTE);

it.each([
  ["its question for them, in a direct message", "dm"],
  ["a question for others, in a channel topic", "topic"],
] as const)(
  "an operator's end of %s, its write slow, a new request meanwhile: the note, then the new question",
  async (_, where) => {
    const { bot } = await start();
    const dm = (content: string) => up!.dm(content);
    const ask = where === "dm" ? () => dm("order") : () => inTopic(MEMBER, "@**Desk** deploy api");
    ask();
    const dialog = await waiting(bot);
    gate!.mode = "hang";
    const ended = end(dialog.id);
    ended.catch(() => {});
    await gate!.stoppedAt(1);
    const { handled } = bot.stats;
    if (where === "dm") dm("order");
    else inTopic(MEMBER, "@**Desk** deploy web");
    // As far as the request goes while the end's write is held: refused (handled), taken as an
    // answer (its write held too), or waiting behind the end in its conversation.
    await expect
      .poll(() => bot.stats.handled > handled || gate!.stopped >= 2 || bot.status.inFlight >= 2)
      .toBe(true);
    gate!.open();
    await ended;
    const first = where === "dm" ? "Which size?" : "Deploy api?";
    const next = where === "dm" ? "Which size?" : "Deploy web?";
    const note = where === "dm" ? NOTE : `@**Mel Member|${idOf(MEMBER)}** ${NOTE}`;
    await expect.poll(() => said().length, { timeout: 15_000 }).toBe(3);
    expect(said().map((s) => s.split("\n")[0])).toEqual([first, note, next]);
    await waiting(bot);
  },
);

it.each([
  ["its question for them", "order", "there", "Which size, from your message?"],
  ["a question for others", "deploy api", "ask", "Deploy from your message?"],
] as const)(
  "%s answered in a topic, its end's write slow: a new one asked there from a direct message waits for the end",
  async (_, begin, fromDm, asked) => {
    const { bot } = await start();
    inTopic(MEMBER, `@**Desk** ${begin}`);
    await waiting(bot);
    // The answer's write lands; the end's, after the dialog's last reply, is held.
    gate!.skip = 1;
    gate!.mode = "hang";
    if (begin === "order") inTopic(MEMBER, "large");
    else inTopic(APPROVER, "approve");
    await gate!.stoppedAt(1);
    const last = begin === "order" ? "large, noted." : "approved by Olive Owner.";
    await expect.poll(() => said("topic").at(-1), { timeout: 15_000 }).toBe(last);
    up!.dm(fromDm);
    // As far as the new dialog goes while the end's write is held: refused, or waiting for the end.
    await expect.poll(() => refused.length > 0 || bot.status.inFlight >= 2).toBe(true);
    gate!.open();
    await expect.poll(() => said().length + refused.length, { timeout: 15_000 }).toBe(3);
    expect([refused, said("dm")]).toEqual([[], []]);
    expect(said("topic").map((s) => s.split("\n")[0])).toEqual([
      begin === "order" ? "Which size?" : "Deploy api?",
      last,
      asked,
    ]);
    await waiting(bot);
  },
);

it("an operator's end written, its reply lost, the daemon cut off before it knew: after the restart, the note, then the new request", async () => {
  const { bot } = await start(true);
  up!.dm("order");
  const dialog = await waiting(bot);
  // The end lands, its reply is lost; its next try waits for a pause the clock never passes.
  gate!.mode = "lose";
  end(dialog.id).catch(() => {});
  await gate!.stoppedAt(1);
  const { handled } = bot.stats;
  up!.dm("order");
  await expect.poll(() => bot.stats.handled > handled || bot.status.inFlight >= 2).toBe(true);
  // Cut off as a crash cuts it: the new request was not handled, the note not said.
  const again = await up!.restart(undefined, { deadlineMs: 0 });
  const next = again.daemon.bots[0]!;
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(3);
  expect(said().map((s) => s.split("\n")[0])).toEqual(["Which size?", NOTE, "Which size?"]);
  await waiting(next);
});

it("a dialog's end written, its reply lost, the daemon cut off while a new question from a direct message waited for it: asked after the restart", async () => {
  const { bot } = await start(true);
  inTopic(MEMBER, "@**Desk** order");
  await waiting(bot);
  // The answer's write lands; the end's lands too, its reply lost; its next try waits for a pause
  // the clock never passes.
  gate!.skip = 1;
  gate!.mode = "lose";
  inTopic(MEMBER, "large");
  await gate!.stoppedAt(1);
  await expect.poll(() => said("topic").at(-1), { timeout: 15_000 }).toBe("large, noted.");
  up!.dm("there");
  await expect.poll(() => refused.length > 0 || bot.status.inFlight >= 2).toBe(true);
  // Cut off as a crash cuts it: the new question was not asked, its message not handled.
  const again = await up!.restart(undefined, { deadlineMs: 0 });
  await expect.poll(() => said().length + refused.length, { timeout: 15_000 }).toBe(3);
  expect([refused, said("dm")]).toEqual([[], []]);
  expect(said("topic")).toEqual(["Which size?", "large, noted.", "Which size, from your message?"]);
  await waiting(again.daemon.bots[0]!);
});

it("an operator's end whose write the store holds past the handler timeout: a question asked there from a direct message waits for the store, then is asked after the note", async () => {
  const { bot } = await start(true, "2s");
  inTopic(MEMBER, "@**Desk** order");
  const dialog = await waiting(bot);
  gate!.mode = "hang";
  end(dialog.id).catch(() => {});
  await gate!.stoppedAt(1);
  up!.dm("there");
  // Past the handler timeout and every attempt, the end's write still held: the run waits, or is given up.
  const logged = (line: string) => up!.running.logged(line).length > 0;
  const outcome = async () => {
    await up!.clock.advance(1_000);
    if (logged("kept as dead letter")) return "kept as a dead letter";
    return logged("the event waits for the store") ? "waits for the store" : undefined;
  };
  let after: string | undefined;
  await expect.poll(async () => (after = await outcome()), { timeout: 15_000 }).toBeTruthy();
  expect(after).toBe("waits for the store");
  gate!.open();
  // The end lands, its note is said; the run waiting for the store goes again after its pause.
  const asked = async () => {
    await up!.clock.advance(1_000);
    return said("topic").length;
  };
  await expect.poll(asked, { timeout: 15_000 }).toBe(3);
  expect([refused, said("dm")]).toEqual([[], []]);
  expect(said("topic")).toEqual([
    "Which size?",
    `@**Mel Member|${idOf(MEMBER)}** ${NOTE}`,
    "Which size, from your message?",
  ]);
  expect(up!.running.logged("handler failed")).toEqual([]);
  await waiting(bot);
});
