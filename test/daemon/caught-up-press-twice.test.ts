/**
 * A press on a question made while the bot was down. The queue is lost again while the caught-up
 * events still wait behind a handler in the topic, so the next catch-up reads the question still
 * waiting and finds the press again: it is not handed again (its first copy not run yet). Alone,
 * the press answers the question and reaches no `reaction` handler, as a live press on a button;
 * after an answer typed then too, the typed answer wins and the press is an ordinary reaction,
 * whose handler runs once and replies once. The same for a question kept at a start (sent before
 * the process stopped, its log not written), whose read-back finds the press too. A real daemon in
 * this process on a test clock against the sandbox over HTTP.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { deferred } from "../support/deferred.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";

const BOT = "deploy-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const QUESTION = "Deploy api 1.4.2?";

/** Holds the handler of a `wait` command; `entered` once it runs. */
let slow: ReturnType<typeof deferred>;
let entered: ReturnType<typeof deferred>;
/** The member whose reactions the bot notes (set once the users exist). */
let memberId = 0;
/** The member's reactions the bot's `reaction` handler saw. */
let seen: string[] = [];

const deploys = defineBot({
  setup(bot) {
    // The events a waiting question needs, received from the start: no queue renewed for them.
    bot.track("reactions");
    bot.on("update_message", () => {});
    bot.on("delete_message", () => {});
    bot.command("deploy", async (ctx) => {
      const decision = await ctx.prompt(QUESTION, { choices: { approve: "check", reject: "cross_mark" } });
      await ctx.reply(`${decision.value} by ${decision.by.name}`);
    });
    bot.command("ping", (ctx) => ctx.reply("pong"));
    bot.on("reaction", { op: "add" }, async (ctx) => {
      if (ctx.event.user_id !== memberId) return;
      seen.push(ctx.event.emoji_name);
      await ctx.send({
        type: "stream",
        to: "general",
        topic: "deploys",
        content: `noted ${ctx.event.emoji_name}`,
      });
    });
    bot.command("wait", async (ctx) => {
      entered.resolve();
      await slow.promise;
      await ctx.reply("waited");
    });
  },
});

let up: GatedDaemon | undefined;
let gate = new StoreGate();
beforeEach(() => {
  slow = deferred();
  entered = deferred();
  seen = [];
  gate = new StoreGate();
});
afterEach(async () => {
  slow.resolve();
  gate.open();
  await closeGatedDaemon(up);
  up = undefined;
});

/** `content` from `email` in the topic the bot asks in. */
function say(email: string, content: string): void {
  up!.sandbox.control.sendAs(email, { type: "stream", to: "general", topic: "deploys", content });
}

function userId(email: string): number {
  return up!.sandbox.control.users().find((u) => u.email === email)!.user_id;
}

/** The first line of each message the bot sent, oldest first. */
function botSaid(): string[] {
  const sent = up!.sandbox.control.messages().filter((m) => m.sender_id === userId(BOT));
  return sent.map((m) => String(m.content).split("\n")[0] as string);
}

/**
 * The daemon started, its dialog writes through `gate` if given (else on a held test clock), and
 * `deploy` asked: the question's id once its two buttons are on it.
 */
async function asked(gated?: StoreGate): Promise<number> {
  up = await startGatedDaemon({
    name: "deploys",
    email: BOT,
    fullName: "Deploys",
    channels: ["general"],
    definition: deploys,
    ...(gated ? { gate: gated, extra: "handler_timeout: 1h" } : { clock: new TestClock({ held: true }) }),
  });
  const { control } = up.sandbox;
  memberId = userId(MEMBER);
  if (gated) gated.mode = "fail";
  say(MEMBER, "@**Deploys** deploy");
  return control.waitFor(() => {
    const m = control.messages().find((x) => x.sender_id === userId(BOT));
    const buttons = (control.messageView(Number(m?.id))?.reactions ?? []) as { user_id: number }[];
    return buttons.filter((r) => r.user_id === userId(BOT)).length === 2 && Number(m!.id);
  });
}

/** The member presses `check` on `question`. */
async function press(question: number): Promise<void> {
  const { control } = up!.sandbox;
  const member = createClient({ url: up!.sandbox.url, email: MEMBER, apiKey: control.apiKeyOf(MEMBER) });
  await member.reactions.add(question, { emoji_name: "check" });
}

/** The queue lost while wait's handler is held: resolves once the new queue's catch-up is over. */
async function queueLost(running: InProcessDaemon): Promise<void> {
  const caughtUp = () => running.logged("caught up after a new queue").length;
  const before = caughtUp();
  up!.sandbox.control.expireQueue({ email: BOT });
  // A poll cut while parked is tried again after a backoff on the test clock.
  for (let s = 0; caughtUp() === before && s < 100; s++) {
    await up!.clock.advance(100);
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Its reactions are caught up last.
  await expect.poll(caughtUp, { timeout: 15_000 }).toBe(before + 1);
}

/** wait let go; resolves once every event before a later `ping` in the topic has run. */
async function allRun(running: InProcessDaemon): Promise<void> {
  slow.resolve();
  await expect.poll(() => running.daemon.bots[0]!.dialogs(), { timeout: 15_000 }).toEqual([]);
  say(MEMBER, "@**Deploys** ping");
  await expect.poll(botSaid, { timeout: 15_000 }).toContain("pong");
}

/**
 * The question asked; while the bot is down, `wait` (held), `typed` if given, and a press of
 * `check`; the queue lost again while they wait; `wait` let go and every event run. Returns how
 * many events the second catch-up handed on.
 */
async function caughtUpTwice(typed: string | undefined): Promise<number> {
  const question = await asked();
  await expect.poll(() => up!.running.daemon.bots[0]!.dialogs().length).toBe(1);
  const running = await up!.restart(async () => {
    say(OWNER, "@**Deploys** wait");
    if (typed !== undefined) say(MEMBER, typed);
    await press(question);
  });
  const bot = running.daemon.bots[0]!;
  await entered.promise;
  // The messages and the press caught up, waiting behind wait's handler; the question still waits.
  const first = typed === undefined ? 2 : 3;
  await expect.poll(() => bot.stats.received, { timeout: 15_000 }).toBe(first);
  await queueLost(running);
  const handed = bot.stats.received - first;
  await allRun(running);
  return handed;
}

it("a press caught up at two new queues answers the question once and reaches no reaction handler", async () => {
  const handed = await caughtUpTwice(undefined);
  expect(botSaid().sort()).toEqual([QUESTION, "waited", "approve by Mel Member", "pong"].sort());
  expect(seen).toEqual([]);
  // Read again: wait (a duplicate, dropped), not the press.
  expect(handed).toBe(1);
});

it("a press caught up at two new queues after a typed answer: its handler runs once, replies once", async () => {
  const handed = await caughtUpTwice("reject");
  // The typed answer's dialog reply and the press's handler run apart: their order is not checked.
  expect(botSaid().sort()).toEqual(
    [QUESTION, "waited", "reject by Mel Member", "noted check", "pong"].sort(),
  );
  expect(seen).toEqual(["check"]);
  // Read again: the two messages (duplicates, dropped), not the press.
  expect(handed).toBe(2);
});

it("a press on a question kept at a start, read back and caught up by a new queue too, is taken once", async () => {
  const question = await asked(gate);
  // Its log's first write refused, as a crash after the send leaves it.
  await gate.stoppedAt(1);
  const restarted = up!.restart(async () => {
    await press(question);
    say(OWNER, "@**Deploys** wait");
    gate.open();
  });
  // The stop waits for the run retrying its write, until the shutdown deadline on the test clock.
  let down = false;
  void restarted.finally(() => {
    down = true;
  });
  for (let s = 0; !down && s < 120; s++) await up!.clock.advance(1_000);
  const running = await restarted;
  const bot = running.daemon.bots[0]!;
  await entered.promise;
  // The question's log written at the start, its read-back waiting behind wait's handler.
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  await queueLost(running);
  // The new queue's catch-up found the press on the question still waiting.
  expect(running.logged("caught up reactions that answer waiting questions")).toHaveLength(1);
  await allRun(running);
  expect(botSaid().sort()).toEqual([QUESTION, "waited", "approve by Mel Member", "pong"].sort());
  expect(seen).toEqual([]);
});

it("a press the queue brought, caught up too by a new queue while it waits behind a handler, is taken once", async () => {
  const question = await asked();
  await expect.poll(() => up!.running.daemon.bots[0]!.dialogs().length).toBe(1);
  // Started again: the next queue's catch-up is not a first start's (it is logged).
  const running = await up!.restart();
  const bot = running.daemon.bots[0]!;
  await expect.poll(() => running.logged("caught up after a new queue").length, { timeout: 15_000 }).toBe(1);
  say(OWNER, "@**Deploys** wait");
  await entered.promise;
  await press(question);
  // The live press waits behind wait's handler (two in flight); the question still waits.
  await expect.poll(() => bot.status.inFlight, { timeout: 15_000 }).toBe(2);
  await queueLost(running);
  await allRun(running);
  expect(botSaid().sort()).toEqual([QUESTION, "waited", "approve by Mel Member", "pong"].sort());
  expect(seen).toEqual([]);
});

it("a press made while a new queue's catch-up reads the question, brought by that queue too, is taken once", async () => {
  const question = await asked();
  const { control } = up!.sandbox;
  const bot = up!.running.daemon.bots[0]!;
  await expect.poll(() => bot.dialogs().length).toBe(1);
  const registrations = bot.status.registrations;
  // The catch-up's reads held: the press comes after the new queue is registered, before the read.
  control.delay(3_600_000, { paths: [/^\/messages$/] });
  control.expireQueue({ email: BOT });
  for (let s = 0; bot.status.registrations === registrations && s < 100; s++) {
    await up!.clock.advance(100);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await control.waitFor(() => control.delayed() >= 1);
  await press(question);
  control.delay(0);
  // Every event the new queue brought handed over, and every run over.
  const pending = () => control.queues().reduce((n, q) => n + q.pending_events, 0);
  await expect
    .poll(() => pending() === 0 && bot.status.inFlight === 0 && bot.dialogs().length === 0, {
      timeout: 15_000,
    })
    .toBe(true);
  expect(botSaid()).toEqual([QUESTION, "approve by Mel Member"]);
  expect(seen).toEqual([]);
});
