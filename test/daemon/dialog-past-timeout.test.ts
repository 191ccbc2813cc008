/**
 * A dialog's work that outlasts the bot's `handler_timeout` keeps the conversation's order:
 * - an answer the store cannot write (it hangs, or refuses every write) is written once the store
 *   is back, the dialog asks its next question, and the person's next message, sent meanwhile,
 *   answers it;
 * - a deadline whose write is held back the same way ends the prompt before the person's next
 *   message there is handled;
 * - a dialog's run still going past its timeout (slow code between two prompts, or a first
 *   question whose record the store holds back) is waited for by the person's next message,
 *   which then answers the question that run asks.
 * A real daemon in this process, against the sandbox over HTTP.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { deferred } from "../support/deferred.ts";
import { gatedBackend, StoreGate } from "../support/gated-store.ts";

const BOT = "survey-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const QUESTIONS = ["Q1 yesterday?", "Q2 today?", "Q3 blockers?"];

let slow = deferred();

const survey = defineBot({
  setup(bot) {
    bot.command("survey", async (ctx) => {
      const answers: string[] = [];
      for (const q of QUESTIONS) answers.push((await ctx.prompt(q)).text);
      await ctx.reply(`summary: ${answers.join(" | ")}`);
    });
    bot.command("size", async (ctx) => {
      try {
        await ctx.prompt("Which size?", { timeout: "1s" });
      } catch {
        await ctx.reply("No answer: no coffee.");
      }
    });
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await slow.promise; // ignores the signal, as slow code may
      const count = await ctx.prompt("How many?");
      await ctx.reply(`${count.text} × ${size.text}`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
let dir: string | undefined;
afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function botSaid(): string[] {
  const botId = sandbox!.control.users().find((u) => u.email === BOT)!.user_id;
  return sandbox!.control
    .messages()
    .filter((m) => m.sender_id === botId)
    .map((m) => String(m.content));
}

async function start(gate: StoreGate, extra = "handler_timeout: 1s") {
  sandbox = await startSandbox();
  sandbox.control.createUser({
    email: BOT,
    full_name: "Survey",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
  dir = await mkdtemp(join(tmpdir(), "bothost-dialog-outage-"));
  const store = gatedBackend(await FileStore.open(dir), ["survey", "dialogs"], gate);
  running = await startInProcessDaemon(
    sandbox,
    { survey: { email: BOT, definition: survey, extra } },
    { store },
  );
  const box = sandbox;
  return (content: string) => box.control.sendAs(MEMBER, { type: "direct", to: [BOT], content });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it.each(["hang", "fail"] as const)(
  "the store's writes %s past the handler timeout: the answer lands, and the next message answers the next question",
  async (mode) => {
    const gate = new StoreGate();
    const dm = await start(gate);
    dm("survey");
    await expect.poll(botSaid, { timeout: 10_000 }).toEqual(QUESTIONS.slice(0, 1));
    gate.mode = mode;
    dm("did a");
    await expect.poll(() => gate.stopped, { timeout: 10_000 }).toBeGreaterThan(0);
    // Longer than handler_timeout: a task writing the answer would have timed out by now.
    await pause(1_500);
    dm("do b");
    await pause(300);
    expect(botSaid()).toEqual(QUESTIONS.slice(0, 1));
    gate.open();
    await expect.poll(botSaid, { timeout: 20_000 }).toEqual(QUESTIONS);
    dm("none");
    await expect.poll(botSaid, { timeout: 10_000 }).toEqual([...QUESTIONS, "summary: did a | do b | none"]);
    expect(running?.logged("could not record a dialog's answer")).toEqual([]);
  },
  40_000,
);

it("a deadline whose write hangs past the handler timeout ends the prompt before the person's next message runs", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("size");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?"]);
  gate.mode = "hang";
  // The deadline (1 s) passes and its write hangs; then past the handler timeout, the person writes.
  await expect.poll(() => gate.stopped, { timeout: 10_000 }).toBeGreaterThan(0);
  await pause(1_500);
  dm("large");
  await pause(300);
  expect(botSaid()).toEqual(["Which size?"]);
  gate.open();
  await expect
    .poll(botSaid, { timeout: 20_000 })
    .toEqual(["Which size?", "No answer: no coffee.", "not a command: large"]);
}, 40_000);

it("the person's next message waits for a dialog's run that outlived its handler timeout, and answers its question", async () => {
  slow = deferred();
  const dm = await start(new StoreGate(), "handler_timeout: 3s\nretries:\n  backoff: 100ms");
  dm("order");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?"]);
  dm("large");
  // The run that took "large" waits on slow code past its handler timeout; then the person writes.
  await pause(3_500);
  dm("2");
  await pause(200);
  expect(botSaid()).toEqual(["Which size?"]);
  slow.resolve();
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?", "How many?", "2 × large"]);
}, 30_000);

it("the first question's record hangs past the handler timeout: the answer sent meanwhile waits for it", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 3s");
  gate.mode = "hang";
  dm("survey");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(QUESTIONS.slice(0, 1));
  await expect.poll(() => gate.stopped, { timeout: 10_000 }).toBeGreaterThan(0);
  await pause(3_500);
  dm("did a");
  await pause(300);
  expect(botSaid()).toEqual(QUESTIONS.slice(0, 1));
  gate.open();
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(QUESTIONS.slice(0, 2));
}, 30_000);
