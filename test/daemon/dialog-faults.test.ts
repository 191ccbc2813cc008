/**
 * Dialogs under the store faults that matter, aimed at the dialog's writes, on a test clock that
 * stands still between the test's moves (a handler timeout fires where the test passes it):
 * a write that lands with its reply lost, an outage longer than a minute, writes held past the
 * handler timeout, a deadline whose write fails, a dialog's first run cut by the handler timeout
 * after its question was out (answered before the next attempt, or in a pause longer than a
 * handler timeout); and an operator's end racing a run in flight or refusing an answer's write
 * (the answer then ordinary, before the messages after it), late answers caught up after a
 * restart (the timeout branch, then each in the order sent), a deleted question's write landing just before a stop, an answer's write landing after
 * the bot's stop cut it off, a bot's first channel question deleted before its log is kept (asked
 * in its own topic, or from a direct message in another with `where`), a channel question deleted
 * while the daemon was down or before the queue renewed for it is registered (read back at the new
 * queue) and one moved meanwhile to a channel the bot is not in (followed), one whose log the stop
 * cut off deleted meanwhile (read back once kept at the next start), code changed under a waiting
 * dialog. A real daemon in this process against the sandbox over HTTP; the store is a FileStore
 * behind a gate. Every check is of what the person saw, in order, once the conversation settled:
 * no sleeps.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { z } from "zod";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { ECHO_WAIT_MS } from "../../src/effects/local-echo.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { deferred } from "../support/deferred.ts";
import { deleteMessageAs } from "../support/delete-message.ts";
import { gatedBackend, StoreGate } from "../support/gated-store.ts";
import { saidAtLeast, botSaid as saidBy } from "../support/self-killing-bot.ts";

const BOT = "survey-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const QUESTIONS = ["Q1 yesterday?", "Q2 today?", "Q3 blockers?"];

let slow = deferred();
/** The runs of `standup` so far; its second waits for `slowAgain`. */
let standups = 0;
let slowAgain = deferred();
/** What the person noted (`note …`: kept here, not answered, so that many cost no sends). */
const noted: string[] = [];
/** With a schema on its first question: the same bot, changed. */
let strict = false;

const survey = defineBot({
  setup(bot) {
    // Reactions come live from the start (a question with emoji choices needs no new queue).
    bot.track("reactions");
    bot.command("survey", async (ctx) => {
      const answers: string[] = [];
      for (const q of QUESTIONS) {
        const options = strict && q === QUESTIONS[0] ? { schema: z.string().min(2) } : {};
        answers.push((await ctx.prompt(q, options)).text);
      }
      await ctx.reply(`summary: ${answers.join(" | ")}`);
    });
    bot.command("standup", async (ctx) => {
      // Its second attempt is slow before it asks (code that ignores the signal, as slow code may).
      if (++standups === 2) await slowAgain.promise;
      const done = await ctx.prompt(QUESTIONS[0]!);
      const next = await ctx.prompt(QUESTIONS[1]!);
      await ctx.reply(`standup: ${done.text} | ${next.text}`);
    });
    bot.command("size", async (ctx) => {
      try {
        await ctx.prompt("Which size?", { timeout: "10m" });
      } catch {
        await ctx.reply("No answer: no coffee.");
      }
    });
    bot.command("there", async (ctx) => {
      try {
        await ctx.prompt("Which size?", { timeout: "10m", where: { channel: "general", topic: "coffee" } });
      } catch {
        await ctx.reply("No answer: no coffee.");
      }
    });
    bot.command("pick", async (ctx) => {
      const pick = await ctx.prompt("Go ahead?", { choices: { yes: "check", no: "x" } });
      await ctx.reply(`picked: ${pick.value}`);
    });
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await slow.promise; // ignores the signal, as slow code may
      const count = await ctx.prompt("How many?");
      await ctx.reply(`${count.text} × ${size.text}`);
    });
    bot.command("nudge", async (ctx) => {
      // Twice at once: one dialog starts.
      const started = await Promise.all([
        ctx.startDialog(ctx.sender!.id, "survey"),
        ctx.startDialog(ctx.sender!.id, "survey again"),
      ]);
      await ctx.reply(`started: ${started.filter(Boolean).length}`);
    });
    bot.command("invite", async (ctx) => {
      await ctx.reply(`invited: ${await ctx.startDialog(ctx.sender!.id, "survey")}`);
    });
    bot.command("approve", async (ctx) => {
      const where = { channel: "general", topic: "approvals" };
      const a = await ctx.prompt("Approve?", { choices: { yes: "check", no: "x" }, where });
      await ctx.reply(`${a.value} by ${a.by.name}`);
    });
    bot.on("message", (ctx) => {
      if (!ctx.text.startsWith("note ")) return ctx.reply(`not a command: ${ctx.text}`);
      noted.push(ctx.text);
      return undefined;
    });
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
  strict = false;
  noted.length = 0;
  standups = 0;
  slowAgain = deferred();
});

/**
 * `vi.waitFor` and `expect.poll` with 15 s of real time: what is waited for is decided by the
 * clock and the gates; the bound is only for a loaded machine, where a step can take seconds.
 */
const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 15_000 });
const poll = <T>(value: () => T) => expect.poll(value, { timeout: 15_000 });

const botSaid = (): string[] => saidBy(sandbox!, BOT);
/** The bot's event queues on the sandbox. */
const botQueues = () => sandbox!.control.queues().filter((q) => q.email === BOT);
/** The daemon renewed its queue for more event types (a dialog's first question asked for them). */
const renewedForEventTypes = () =>
  poll(() =>
    running!.logs.some((l) => l.msg === "event queue registered" && l.reason === "event_types"),
  ).toBe(true);
/** The daemon took every event waiting for it: its queue is drained and polled again. */
const drained = () => waitFor(() => expect(botQueues()).toMatchObject([{ pending_events: 0, parked: true }]));

/** Everything the bot said, once it said `count` things. */
const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

async function start(gate: StoreGate, extra = "handler_timeout: 1s", channels: string[] = []) {
  clock = new TestClock({ held: true });
  sandbox = await startSandbox({ clock });
  sandbox.control.createUser({
    email: BOT,
    full_name: "Survey",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels,
  });
  dir = await mkdtemp(join(tmpdir(), "bothost-dialog-faults-"));
  await daemonUp(gate, extra);
  const box = sandbox;
  return (content: string) => box.control.sendAs(MEMBER, { type: "direct", to: [BOT], content }).id;
}

async function daemonUp(gate: StoreGate, extra = "handler_timeout: 1s") {
  const store = gatedBackend(
    await FileStore.open(dir!, { now: () => clock.now() }),
    ["survey", "dialogs"],
    gate,
  );
  running = await startInProcessDaemon(
    sandbox!,
    { survey: { email: BOT, definition: survey, extra } },
    { store, clock, stateDir: join(dir!, "daemon") },
  );
}

/** Resolves once the dialog waits at question `step` (its log kept). */
async function waitingAt(step: number) {
  await expect
    .poll(() => running!.daemon.bots[0]!.dialogs().map((d) => [d.step, d.deadline !== undefined]), {
      timeout: 15_000,
    })
    .toEqual([[step, true]]);
}

/** Move the test clock `ms` forward, a step at a time (each step lets the work it starts run). */
async function pass(ms: number, step = 1_000) {
  for (let left = ms; left > 0; left -= step) await clock.advance(Math.min(step, left));
}

/**
 * Resolves once the daemon logged `line` (`n` times in all): the pause it logs before is on the
 * clock, so a {@link pass} after this one reaches it (time stands still until then).
 */
const logged = (line: string, n = 1) =>
  expect.poll(() => running!.logged(line).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(n);
const STORE_RETRY = "the state store failed a dialog's write; trying again";
const TIMED_OUT = "handler timed out; its signal was aborted and the queue moved on";

it("an answer's write that lands with its reply lost: the dialog goes on, nothing asked twice", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("survey");
  expect(await said(1)).toEqual([QUESTIONS[0]]);
  await waitingAt(1);
  gate.mode = "lose";
  dm("did a");
  await gate.stoppedAt(1);
  await logged(STORE_RETRY);
  await pass(1_000, 250);
  expect(await said(2)).toEqual(QUESTIONS.slice(0, 2));
  dm("do b");
  expect(await said(3)).toEqual(QUESTIONS);
  dm("none");
  expect(await said(4)).toEqual([...QUESTIONS, "summary: did a | do b | none"]);
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
});

it("an answer's write that lands after the bot's stop cut it off: nothing runs on the stopped bot, and its next start asks once", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("survey");
  expect(await said(1)).toEqual([QUESTIONS[0]]);
  await waitingAt(1);
  gate.mode = "hang";
  dm("did a");
  await gate.stoppedAt(1);
  // The bot stops (its lease lost, say) with no time to finish: the answer's write is under way.
  const bot = running!.daemon.bots[0]!;
  await bot.stop(0);
  gate.open();
  await poll(() => running!.logs.filter((l) => String(l.msg).includes("landed after the stop")).length).toBe(
    1,
  );
  expect(botSaid()).toEqual([QUESTIONS[0]]);
  await bot.start();
  expect(await said(2)).toEqual(QUESTIONS.slice(0, 2));
  dm("did b");
  expect(await said(3)).toEqual(QUESTIONS);
});

it("a question's write that lands with its reply lost: it waits once, and the next message answers it", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("survey");
  expect(await said(1)).toEqual([QUESTIONS[0]]);
  dm("did a");
  expect(await said(2)).toEqual(QUESTIONS.slice(0, 2));
  await waitingAt(2);
  gate.mode = "lose";
  // The answer's append is lost-replied and retried; the next question's append follows it.
  dm("do b");
  await gate.stoppedAt(1);
  await logged(STORE_RETRY);
  await pass(1_000, 250);
  expect(await said(3)).toEqual(QUESTIONS);
  dm("none");
  expect(await said(4)).toEqual([...QUESTIONS, "summary: did a | do b | none"]);
});

it("a dialog start whose write lands with its reply lost: the handler's next attempt starts it, asked once", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  gate.mode = "lose";
  dm("invite");
  await gate.stoppedAt(1);
  // The handler failed on the lost reply; its next attempt, after the pause, finds the start made.
  await logged("running it again after a pause");
  await pass(2_000, 250);
  expect(await said(2)).toEqual(["invited: true", QUESTIONS[0]]);
  dm("did a");
  expect(await said(3)).toEqual(["invited: true", ...QUESTIONS.slice(0, 2)]);
  dm("do b");
  expect(await said(4)).toEqual(["invited: true", ...QUESTIONS]);
  dm("none");
  expect(await said(5)).toEqual(["invited: true", ...QUESTIONS, "summary: did a | do b | none"]);
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
});

it("a store outage longer than a minute: messages wait in order, each answer under the question it followed", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("survey");
  expect(await said(1)).toEqual([QUESTIONS[0]]);
  await waitingAt(1);
  gate.mode = "fail";
  dm("did a");
  await gate.stoppedAt(1);
  await pass(60_000);
  // Sent during the outage, before Q2 was asked: it waits behind the unrecorded answer, then is
  // an ordinary message (it answers no question the person had seen).
  const during = dm("still there?");
  await pass(30_000);
  expect(gate.stopped).toBeGreaterThan(5);
  gate.open();
  await pass(31_000);
  expect(await said(3)).toEqual([...QUESTIONS.slice(0, 2), "not a command: still there?"]);
  dm("do b");
  expect(await said(4)).toEqual([...QUESTIONS.slice(0, 2), "not a command: still there?", QUESTIONS[2]]);
  const last = dm("none");
  expect((await said(5)).at(-1)).toBe("summary: did a | do b | none");
  // The ledger's cursor is not stuck below the messages of the outage.
  await running!.ledger.until("survey", last, 15_000, () => new Error(`message ${during} never handled`));
});

it("an outage with 300 messages behind an unrecorded answer, of 90 s and of 11 minutes: all taken, in order", async () => {
  for (const outageMs of [90_000, 11 * 60_000]) {
    const gate = new StoreGate();
    const dm = await start(gate);
    dm("survey");
    expect(await said(1)).toEqual([QUESTIONS[0]]);
    await waitingAt(1);
    gate.mode = "fail";
    dm("did a");
    await gate.stoppedAt(1);
    const sent = Array.from({ length: 300 }, (_, i) => `note ${i + 1}`);
    for (const text of sent) dm(text);
    await pass(outageMs, 5_000);
    gate.open();
    await pass(31_000);
    expect(await said(2)).toEqual(QUESTIONS.slice(0, 2));
    await expect.poll(() => noted.length, { timeout: 15_000 }).toBe(300);
    expect(noted).toEqual(sent);
    await running!.stop();
    running = undefined;
    await sandbox!.stop();
    sandbox = undefined;
    noted.length = 0;
  }
});

it("the store's writes hang past the handler timeout: the next message waits, then is taken in its order", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("survey");
  expect(await said(1)).toEqual([QUESTIONS[0]]);
  await waitingAt(1);
  gate.mode = "hang";
  dm("did a");
  await gate.stoppedAt(1);
  await pass(3_000, 500);
  // In the daemon before the clock passes its handler timeout, it waits behind the held answer.
  dm("one more thing");
  await drained();
  await pass(3_000, 500);
  // The held answer is no handler's run: nothing was cut by a timeout.
  expect(running!.logged(TIMED_OUT)).toEqual([]);
  gate.open();
  expect(await said(3)).toEqual([...QUESTIONS.slice(0, 2), "not a command: one more thing"]);
  dm("do b");
  expect((await said(4)).at(-1)).toBe(QUESTIONS[2]);
  dm("none");
  expect((await said(5)).at(-1)).toBe("summary: did a | do b | none");
});

/**
 * `standup` asks Q1; the send is stored with its answer lost (502 after acting) and its echo comes
 * by a poll held until released, so the run waits past the handler timeout (1.5 s, shorter than a
 * lost send's wait for its echo, 2 s) and is aborted; it runs again after `backoff`, and that
 * attempt waits in the bot's code (`slowAgain`) before it asks. `answer`: "did a", sent after Q1,
 * taken by the bot; `rest`: the attempt goes on, Q2 is asked and answered, the summary said.
 */
async function firstRunCut(backoff: string) {
  const dm = await start(
    new StoreGate(),
    `handler_timeout: 1500ms\nretries: { attempts: 2, backoff: ${backoff} }`,
  );
  const control = sandbox!.control;
  control.failNext(1, { status: 502, after: true, paths: [/^\/messages$/], methods: ["POST"] });
  await drained();
  control.delay(600_000, { paths: [/^\/events$/] });
  dm("standup");
  await waitFor(() => expect(botSaid()).toEqual([QUESTIONS[0]]));
  // The send's answer lost, it waits for its echo; the clock stands still until the test moves
  // it, so the handler timeout, not the machine's pace, ends that wait.
  await waitFor(() => expect(clock.pendingDelays()).toContain(ECHO_WAIT_MS));
  expect(running!.logged(TIMED_OUT)).toEqual([]);
  await pass(1_500, 250);
  expect(running!.logged(TIMED_OUT)).toHaveLength(1);
  const answer = async () => {
    const id = dm("did a");
    expect(id).toBeGreaterThan(control.messages().find((m) => m.content === QUESTIONS[0])!.id as number);
    control.delay(0);
    await drained();
  };
  const rest = async () => {
    slowAgain.resolve();
    expect(await said(2)).toEqual(QUESTIONS.slice(0, 2));
    dm("do b");
    expect(await said(3)).toEqual([...QUESTIONS.slice(0, 2), "standup: did a | do b"]);
  };
  return { answer, rest };
}

it("a dialog's first run cut by the handler timeout after its question was out: the person's answer waits for the next attempt, then answers it", async () => {
  const { answer, rest } = await firstRunCut("10ms");
  expect(standups).toBe(1);
  // Past the failure stage's pause: the next attempt waits in the bot's code before it asks.
  await pass(10);
  await waitFor(() => expect(standups).toBe(2));
  await answer();
  await rest();
});

it("a dialog's first run cut by the handler timeout, its next attempt after a pause longer than a handler timeout: the answer waits for it, not for its own timeout", async () => {
  // The failure stage's pause (5 s) outlasts the answer's own handler timeout (1.5 s).
  const { answer, rest } = await firstRunCut("5s");
  await waitFor(() =>
    expect(running!.logs.some((l) => l.msg === "handler failed; running it again after a pause")).toBe(true),
  );
  await answer();
  // Past the answer's own handler timeout, then past the pause: the next attempt keeps the question.
  await pass(3_000, 250);
  expect(standups).toBe(1);
  await pass(3_000, 250);
  await waitFor(() => expect(standups).toBe(2));
  await rest();
});

it("a dialog's first question whose log write fails after the handler timeout cut its run: the next attempt keeps it, and the answer waits for it", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 1500ms\nretries: { attempts: 2, backoff: 10s }");
  const control = sandbox!.control;
  // The question's buttons (its emoji) are held: its run is cut by the timeout after the send.
  control.delay(600_000, { paths: [/^\/messages\/\d+\/reactions$/] });
  dm("pick");
  await waitFor(() => expect(botSaid()).toHaveLength(1));
  const question = botSaid()[0]!;
  await waitFor(() => expect(control.delayed()).toBe(1));
  dm("yes");
  // The answer is in before the timeout (the clock stands still until the test moves it).
  await drained();
  // Its signal aborted by the timeout, the question's log write is tried once: the store fails it.
  gate.mode = "fail";
  expect(running!.logged(TIMED_OUT)).toEqual([]);
  await pass(1_500, 250);
  expect(running!.logged(TIMED_OUT)).toHaveLength(1);
  control.delay(0);
  // Run again after a pause (with the fix), or left to the next start (without).
  const failed = () =>
    running!.logs.some((l) =>
      /running it again after a pause|its message runs again at the next start/.test(l.msg as string),
    );
  await vi.waitFor(() => expect(failed()).toBe(true), { timeout: 15_000 });
  gate.open();
  await pass(10_000, 250);
  expect(await said(2)).toEqual([question, "picked: yes"]);
});

it("a deadline whose write fails past its tries ends the prompt once the store is back; the next message is ordinary", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("size");
  expect(await said(1)).toEqual(["Which size?"]);
  await waitingAt(1);
  gate.mode = "fail";
  await pass(10 * 60_000 + 1_000, 5_000);
  await gate.stoppedAt(1);
  await pass(60_000, 5_000);
  gate.open();
  await pass(31_000, 1_000);
  expect(await said(2)).toEqual(["Which size?", "No answer: no coffee."]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", "No answer: no coffee.", "not a command: large"]);
});

it("an operator's end while a run is in flight is final: the run asks nothing more", async () => {
  slow = deferred();
  const dm = await start(new StoreGate());
  dm("order");
  expect(await said(1)).toEqual(["Which size?"]);
  const bot = running!.daemon.bots[0]!;
  // The question's log kept (until then the dialog shows no deadline).
  await poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  dm("large");
  // The run that took "large" (the dialog's deadline is off while it runs) waits on slow code,
  // past its handler timeout.
  await poll(() => bot.dialogs().map((d) => d.deadline)).toEqual([undefined]);
  expect(running!.logged(TIMED_OUT)).toEqual([]);
  await pass(3_000, 500);
  expect(running!.logged(TIMED_OUT)).toHaveLength(1);
  const [dialog] = running!.daemon.bots[0]!.dialogs();
  expect(await running!.daemon.bots[0]!.endDialog(dialog!.id, "Ended by an operator.")).toBe(true);
  slow.resolve();
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "Ended by an operator.", "not a command: 2"]);
  expect(running!.logged("ended while its run was under way")).toHaveLength(1);
});

it("an operator's end answers at once while a run holds the conversation; the note follows the run", async () => {
  slow = deferred();
  const dm = await start(new StoreGate(), "handler_timeout: 1h");
  dm("order");
  expect(await said(1)).toEqual(["Which size?"]);
  const bot = running!.daemon.bots[0]!;
  // The question's log kept (until then the dialog shows no deadline either, and is not yet ended).
  await poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  dm("large");
  // The run that took "large" waits on slow code, within its handler timeout.
  await poll(() => bot.dialogs().map((d) => d.deadline)).toEqual([undefined]);
  let ended: boolean | undefined;
  void bot.endDialog(bot.dialogs()[0]!.id, "Ended by an operator.").then((e) => {
    ended = e;
  });
  await poll(() => ended).toBe(true);
  expect(bot.dialogs()).toEqual([]);
  expect(botSaid()).toEqual(["Which size?"]);
  slow.resolve();
  expect(await said(2)).toEqual(["Which size?", "Ended by an operator."]);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "Ended by an operator.", "not a command: 2"]);
});

it("an answer whose write an operator's end refused is an ordinary message before the messages after it", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("size");
  expect(await said(1)).toEqual(["Which size?"]);
  const bot = running!.daemon.bots[0]!;
  await poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  gate.mode = "hang";
  dm("large");
  await gate.stoppedAt(1);
  dm("small");
  await drained();
  const ending = bot.endDialog(bot.dialogs()[0]!.id, "Ended by an operator.");
  await gate.stoppedAt(2);
  // The answer's write fails (not made) and waits to be tried again; the end's lands meanwhile.
  gate.refuse();
  await logged(STORE_RETRY);
  gate.open();
  expect(await ending).toBe(true);
  await pass(5_000, 500);
  expect(await said(4)).toEqual([
    "Which size?",
    "not a command: large",
    "not a command: small",
    "Ended by an operator.",
  ]);
});

it("a reaction on a question whose log is not kept yet waits for the log, then answers", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 1h");
  const auth = Buffer.from(`${MEMBER}:${sandbox!.control.apiKeyOf(MEMBER)}`).toString("base64");
  const react = (id: number) =>
    fetch(`${sandbox!.url}/api/v1/messages/${id}/reactions`, {
      method: "POST",
      headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ emoji_name: "check" }),
    });
  /** The `n`th question, once its two buttons are on it. */
  const question = (n: number) =>
    waitFor(() => {
      const m = sandbox!.control.messages().filter((x) => String(x.content).startsWith("Approve?"))[n - 1];
      expect((sandbox!.control.messageView(m!.id as number)!.reactions as unknown[]).length).toBe(2);
      return m as { id: number; content: string };
    });
  // A first approval: the bot's queue takes reactions and message moves from then on.
  dm("approve");
  expect((await react((await question(1)).id)).status).toBe(200);
  expect((await said(2))[1]).toBe("yes by Mel Member");
  // Its end is written after that reply, on the reaction's key: until then a question asked in the
  // same topic is refused ("another dialog waits for an answer there").
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);

  gate.mode = "hang";
  dm("approve");
  // The question and its buttons are out in #general > approvals; its log waits on the store.
  const second = await question(2);
  await gate.stoppedAt(1);
  expect((await react(second.id)).status).toBe(200);
  // The daemon has the reaction: its queue is drained and polled again.
  await drained();
  gate.open();
  expect((await said(4))[3]).toBe("yes by Mel Member");
});

it("two messages sent after the deadline while the daemon was down: ordinary, after the timeout branch, in the order sent", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("size");
  expect(await said(1)).toEqual(["Which size?"]);
  await running!.stop({ keepState: true });
  await pass(11 * 60_000, 30_000);
  dm("large");
  dm("small");
  await daemonUp(gate);
  expect(await said(4)).toEqual([
    "Which size?",
    "No answer: no coffee.",
    "not a command: large",
    "not a command: small",
  ]);
});

it("a deleted question's write that lands, the daemon stopped before the dialog ran: it runs once at the next start", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("size");
  expect(await said(1)).toEqual(["Which size?"]);
  await waitingAt(1);
  // The question renewed the queue with message deletions.
  await renewedForEventTypes();
  const question = sandbox!.control.messages().find((m) => m.content === "Which size?")!.id as number;
  gate.mode = "lose";
  // Deleted with the bot's own key (as its owner may): the deletion's append lands, its reply is lost.
  await deleteMessageAs(sandbox!, BOT, question);
  await gate.stoppedAt(1);
  await running!.stop({ keepState: true, deadlineMs: 0 });
  expect(botSaid()).toEqual([]);
  await daemonUp(gate);
  expect(await said(1)).toEqual(["No answer: no coffee."]);
  dm("large");
  expect(await said(2)).toEqual(["No answer: no coffee.", "not a command: large"]);
});

it("a question deleted while its log's write hangs: once the write lands the prompt ends; the next message is ordinary", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 1h");
  // A first question renews the queue with message deletions; answered, its dialog is over.
  dm("size");
  await waitingAt(1);
  await renewedForEventTypes();
  dm("small");
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);

  gate.mode = "hang";
  dm("size");
  await gate.stoppedAt(1);
  const question = sandbox!.control.messages().filter((m) => m.content === "Which size?")[1]!.id as number;
  await deleteMessageAs(sandbox!, BOT, question);
  // The daemon has the deletion: its queue is drained and polled again.
  await drained();
  gate.open();
  expect(await said(2)).toEqual(["Which size?", "No answer: no coffee."]);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", "No answer: no coffee.", "not a command: large"]);
});

it("the bot's first question, in a channel topic, deleted while its log's write hangs: the queue it was renewed to already takes deletions; the prompt ends", async () => {
  const gate = new StoreGate();
  await start(gate, "handler_timeout: 1h", ["general"]);
  gate.mode = "hang";
  const topic = { type: "stream" as const, to: "general", topic: "coffee" };
  sandbox!.control.sendAs(MEMBER, { ...topic, content: "@**Survey** size" });
  // Sent, its log's write held: the dialog began before the send, and renewed the queue then.
  await gate.stoppedAt(1);
  await renewedForEventTypes();
  // That one renewal asked for deletions (and moves): a second one, once the log is kept, would
  // come after the question is out, and a deletion in between reaches no queue that takes it.
  expect(botQueues()).toMatchObject([
    { event_types: expect.arrayContaining(["delete_message", "update_message"]) },
  ]);
  const question = sandbox!.control.messages().find((m) => m.content === "Which size?")!.id as number;
  await deleteMessageAs(sandbox!, BOT, question);
  // The daemon has the deletion: its queue is drained and polled again.
  await drained();
  gate.open();
  // The question is gone from the topic; what the handler's catch says is there.
  await expect.poll(() => botSaid(), { timeout: 15_000 }).toEqual(["No answer: no coffee."]);
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
});

it("a direct message's question asked in a channel topic (`where`), deleted while its log's write hangs: the queue renewed before its send takes deletions; the prompt ends", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "handler_timeout: 1h", ["general"]);
  gate.mode = "hang";
  dm("there");
  // Sent to the channel topic, its log's write held: the queue was renewed before the send.
  await gate.stoppedAt(1);
  await renewedForEventTypes();
  // That one renewal asked for deletions and moves, for the place the question went to: asked
  // once the log is kept, they would come after the question is out, and a deletion in between
  // reaches no queue that takes it (it is found only when the new queue reads the questions back).
  expect(botQueues()).toMatchObject([
    { event_types: expect.arrayContaining(["delete_message", "update_message"]) },
  ]);
  const question = sandbox!.control.messages().find((m) => m.content === "Which size?")!;
  expect(question.type).toBe("stream");
  await deleteMessageAs(sandbox!, BOT, question.id as number);
  // The daemon has the deletion: its queue is drained and polled again.
  await drained();
  gate.open();
  // The question is gone from the topic; what the handler's catch says is in the direct message.
  await expect.poll(() => botSaid(), { timeout: 15_000 }).toEqual(["No answer: no coffee."]);
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
});

/** The bot's `text` message (its id, channel and topic). */
const botMessage = (text: string) => sandbox!.control.messages().find((m) => m.content === text)!;

const COFFEE = { type: "stream" as const, to: "general", topic: "coffee" };

it("the bot's question in a channel topic, deleted while the daemon was down: read back at the next start, the prompt ends", async () => {
  const gate = new StoreGate();
  await start(gate, "handler_timeout: 1s", ["general"]);
  sandbox!.control.sendAs(MEMBER, { ...COFFEE, content: "@**Survey** size" });
  expect(await said(1)).toEqual(["Which size?"]);
  await waitingAt(1);
  await running!.stop({ keepState: true });
  await deleteMessageAs(sandbox!, BOT, botMessage("Which size?").id as number);
  await daemonUp(gate);
  // Gone from both reads (the bot's own, and public channels'): deleted, not moved.
  expect(await said(1)).toEqual(["No answer: no coffee."]);
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
  expect(running!.logged("a dialog's waiting question was deleted")).toHaveLength(1);
  sandbox!.control.sendAs(MEMBER, { ...COFFEE, content: "large" });
  expect(await said(2)).toEqual(["No answer: no coffee.", "not a command: large"]);
});

it("the bot's first question in a channel topic, deleted before the queue renewed for it is registered: read back at that queue, the prompt ends", async () => {
  await start(new StoreGate(), "handler_timeout: 1s", ["general"]);
  // The renewal that asks for deletions is held at the server: the question goes out meanwhile.
  sandbox!.control.delay(60_000, { paths: ["/register"] });
  sandbox!.control.sendAs(MEMBER, { ...COFFEE, content: "@**Survey** size" });
  expect(await said(1)).toEqual(["Which size?"]);
  await waitingAt(1);
  await waitFor(() => expect(sandbox!.control.delayed()).toBe(1));
  // Deleted while no queue that takes deletions exists: no event will tell of it.
  await deleteMessageAs(sandbox!, BOT, botMessage("Which size?").id as number);
  sandbox!.control.delay(0);
  await expect.poll(() => botSaid(), { timeout: 15_000 }).toEqual(["No answer: no coffee."]);
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
  expect(botQueues()).toMatchObject([{ event_types: expect.arrayContaining(["delete_message"]) }]);
});

it("the bot's question in a channel topic, moved while the daemon was down to a channel the bot is not in: followed there, not ended", async () => {
  const gate = new StoreGate();
  await start(gate, "handler_timeout: 1s", ["general"]);
  sandbox!.control.sendAs(MEMBER, { ...COFFEE, content: "@**Survey** survey" });
  expect(await said(1)).toEqual([QUESTIONS[0]]);
  await waitingAt(1);
  await running!.stop({ keepState: true });
  // The owner makes a public channel the bot is not in, and moves the topic there: the server
  // takes the question from what the bot holds, as it does a deleted one.
  const OWNER = "owner@sandbox.example";
  const owner = createClient({
    url: sandbox!.url,
    email: OWNER,
    apiKey: sandbox!.control.apiKeyOf(OWNER),
    rateLimit: false,
  });
  await owner.channels.subscribe({ subscriptions: [{ name: "kitchen" }] });
  const kitchen = (await owner.channels.id("kitchen")).stream_id;
  const question = botMessage(QUESTIONS[0]!).id as number;
  // No Notification Bot notice in the new topic: this test is about following the move.
  await owner.messages.update(question, {
    stream_id: kitchen,
    topic: "orders",
    propagate_mode: "change_all",
    send_notification_to_new_thread: false,
  });
  await daemonUp(gate);
  const there = { type: "stream" as const, to: "kitchen", topic: "orders" };
  sandbox!.control.sendAs(MEMBER, { ...there, content: "did a" });
  expect(await said(2)).toEqual(QUESTIONS.slice(0, 2));
  expect(botMessage(QUESTIONS[1]!)).toMatchObject({ stream_id: kitchen, topic: "orders" });
  expect(running!.logged("a dialog's waiting question was deleted")).toEqual([]);
});

it("the bot's question in a channel topic, its log not kept before the stop, deleted while the daemon was down: kept at the next start, read back, the prompt ends", async () => {
  const gate = new StoreGate();
  // Deletions and moves come from the start: no renewed queue reads the kept question back.
  const extra = "handler_timeout: 1h\nevents: [message, reaction, delete_message, update_message]";
  await start(gate, extra, ["general"]);
  gate.mode = "fail";
  sandbox!.control.sendAs(MEMBER, { ...COFFEE, content: "@**Survey** size" });
  expect(await said(1)).toEqual(["Which size?"]);
  // Sent, its log's write refused: the stop cuts the run off before the dialog waits.
  await gate.stoppedAt(1);
  await running!.stop({ keepState: true, deadlineMs: 0 });
  await deleteMessageAs(sandbox!, BOT, botMessage("Which size?").id as number);
  gate.open();
  await daemonUp(gate, extra);
  // The message is run again: the send is found in its records (nothing sent), the question kept
  // and, once its log is written, read back (the new queue's read-back had no dialog to read).
  await expect.poll(() => botSaid(), { timeout: 15_000 }).toEqual(["No answer: no coffee."]);
  await poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
  // No queue was renewed for it: the bot receives deletions and moves from the start.
  expect(running!.logs.filter((l) => l.msg === "event queue registered").map((l) => l.reason)).toEqual([
    "start",
  ]);
});

it("code that adds a schema to an answered question stops the dialog, the person told, nothing cut back", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  dm("survey");
  expect(await said(1)).toEqual([QUESTIONS[0]]);
  dm("a");
  expect(await said(2)).toEqual(QUESTIONS.slice(0, 2));
  await running!.stop({ keepState: true });
  strict = true;
  await daemonUp(gate);
  dm("do b");
  const told = await said(3);
  expect(told[2]).toMatch(/updated in the middle of our conversation/);
  dm("next");
  expect(await said(4)).toEqual([...told, "not a command: next"]);
});

it("a dialog the bot started has an id operators can end it by, and two starts at once make one", async () => {
  const dm = await start(new StoreGate());
  dm("nudge");
  const first = await said(2);
  expect(first.slice().sort()).toEqual([QUESTIONS[0], "started: 1"].sort());
  const [dialog] = running!.daemon.bots[0]!.dialogs();
  expect(dialog!.id).toMatch(/^s[0-9a-f]{12}$/);
  await dialogDesk(running!.daemon.bots).endDialog("survey", dialog!.id, "Ended by an operator.");
  expect(await said(3)).toEqual([...first, "Ended by an operator."]);
  dm("did a");
  expect(await said(4)).toEqual([...first, "Ended by an operator.", "not a command: did a"]);
});
