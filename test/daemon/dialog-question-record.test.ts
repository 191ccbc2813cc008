/**
 * A dialog's question whose send record (its effect record, written before and after the send)
 * meets a store outage: the prompt waits the outage out, as the dialog's log writes do, instead of
 * rejecting with the store's error. A bot that catches every error of `ctx.prompt` would otherwise
 * tell the person of a failure although the question was asked. An outage past every attempt
 * keeps the message nowhere: it waits for the store, then asks nothing twice. A real daemon in this process
 * against the sandbox; the store is a FileStore whose effect records go through a gate; the test
 * clock (standing still between the test's moves), no sleeps.
 */
import { rm } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { STORE_WAIT_LINE } from "../../src/pipeline/handler-failures.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { saidAtLeast, botSaid as saidBy } from "../support/self-killing-bot.ts";

const BOT = "size-bot@sandbox.example";
const SORRY = "Sorry, something failed.";

const sizes = defineBot({
  setup(bot) {
    bot.command("size", async (ctx) => {
      // Catches everything, as the docs advise against: any error here is told to the person.
      try {
        const size = await ctx.prompt("Which size?");
        await ctx.reply(`${size.text} it is.`);
      } catch {
        await ctx.reply(SORRY);
      }
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
let dir: string | undefined;
let clock: TestClock;
afterEach(async () => {
  // No deadline: the clock stands still, and a run a failed case left stuck would hold the stop.
  await running?.stop({ deadlineMs: 0 });
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const botSaid = (): string[] => saidBy(sandbox!, BOT);

const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

/** A daemon whose bot's effect records go through `gate`; returns how the member writes to it. */
async function start(gate: StoreGate, extra: string) {
  const up = await startGatedDaemon({
    name: "sizes",
    email: BOT,
    fullName: "Sizes",
    definition: sizes,
    extra,
    gate,
    gated: "effects",
    clock: new TestClock({ held: true }),
  });
  ({ sandbox, running, clock, dir } = up);
  return up.dm;
}

async function pass(ms: number, step = 250) {
  for (let left = ms; left > 0; left -= step) await clock.advance(Math.min(step, left));
}

const TIMED_OUT = "handler timed out; its signal was aborted and the queue moved on";

/** Resolves once the dialog waits at question `step` (15 s of real time: a bound for a loaded machine). */
const atStep = (step: number) =>
  expect
    .poll(() => running!.daemon.bots[0]!.dialogs().map((d) => d.step), { timeout: 15_000 })
    .toEqual([step]);

it("the question's send record lands with its reply lost, just after the send: the dialog goes on, asked once", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 1s");
  // The send's pending record passes; the finished one, written after the send, loses its reply.
  gate.skip = 1;
  gate.mode = "lose";
  dm("size");
  await gate.stoppedAt(1);
  // The write is tried again after a pause on the clock (or, were the prompt to reject, the bot
  // says sorry). The clock stands still until the test moves it: that pause, well within the
  // handler timeout (1 s), and no further.
  const retried = () => running!.logged("the state store failed a dialog's write; trying again").length;
  await expect.poll(() => retried() > 0 || botSaid().length > 1, { timeout: 15_000 }).toBe(true);
  expect(botSaid()).toEqual(["Which size?"]);
  await pass(250);
  await atStep(1);
  expect(running!.logged(TIMED_OUT)).toEqual([]);
  expect(botSaid()).toEqual(["Which size?"]);
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "large it is."]);
});

it("the store down just after the question is sent, for a minute: the prompt waits, the dialog goes on", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 1h");
  gate.skip = 1;
  gate.mode = "fail";
  dm("size");
  await gate.stoppedAt(1);
  await pass(60_000, 1_000);
  expect(gate.stopped).toBeGreaterThan(3);
  expect(botSaid()).toEqual(["Which size?"]);
  gate.open();
  await pass(31_000, 1_000);
  await atStep(1);
  dm("small");
  expect(await said(2)).toEqual(["Which size?", "small it is."]);
});

it("the store down before the question is sent: it is asked once the store is back, once", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 1h");
  gate.mode = "fail";
  dm("size");
  await gate.stoppedAt(1);
  await pass(60_000, 1_000);
  expect(botSaid()).toEqual([]);
  gate.open();
  await pass(31_000, 1_000);
  expect(await said(1)).toEqual(["Which size?"]);
  await atStep(1);
  dm("medium");
  expect(await said(2)).toEqual(["Which size?", "medium it is."]);
});

it("an outage past the handler timeout just after the send: nothing more is said; the message waits for the store, then asks nothing twice", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 1s");
  gate.skip = 1;
  gate.mode = "fail";
  dm("size");
  await gate.stoppedAt(1);
  // Each attempt waits for the store until its handler timeout; the prompt then rejects, but the
  // run's signal is aborted, so the handler's reply is never sent. Every attempt failed on the
  // outage, the message is kept nowhere: it waits for the store. Each poll moves the test clock
  // 5 s; the real-time bound is only for a loaded machine, where one move can take over a second.
  await expect
    .poll(
      async () => {
        await pass(5_000, 1_000);
        return running!.logged(STORE_WAIT_LINE).length;
      },
      { timeout: 15_000 },
    )
    .toBe(1);
  expect(botSaid()).toEqual(["Which size?"]);
  expect(await running!.daemon.letters.list()).toEqual([]);
  gate.open();
  await expect
    .poll(
      async () => {
        await pass(5_000, 1_000);
        return running!.daemon.bots[0]!.dialogs().map((d) => d.step);
      },
      { timeout: 15_000 },
    )
    .toEqual([1]);
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "large it is."]);
  expect(running!.logged("kept as dead letter")).toEqual([]);
});
