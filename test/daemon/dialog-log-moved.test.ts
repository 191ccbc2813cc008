/**
 * A dialog's log moved under this process by another writer (two daemons on one store, as during a
 * takeover): the write the log refuses (`LogMoved`) has the dialog read again from the store, as
 * its log now is, instead of waiting on at the step this process last knew. A deadline refused so
 * is not fired again at once (a hot loop of refused writes), and an answer refused so is matched
 * again against the log as it is (the other writer recorded it: a copy, handled once). A deadline
 * the other writer recorded and never ran (its lease lost) runs here at once; a run whose question
 * the other writer's run kept first leaves the dialog waiting there; a reaction refused so is
 * matched again too; an answer refused as ended, the other writer having recorded it and ended
 * the dialog, is a copy; a dialog the bot starts that the other writer began first runs here if
 * that writer stopped before running it. Two versions of the bot (a rolling deploy) running one
 * answer: the run whose next question the log refuses, another than the one it holds, stops
 * quietly, on a first attempt or a later one, and the dialog goes on at the log's question. Both
 * running one answer at once: what the run says before its next question is said once.
 * Two real daemons in this process against the sandbox over HTTP, on one
 * test clock and one file store; each daemon's dialog writes may pass a gate, and the first one's
 * are counted.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { gatedBackend, StoreGate, unclosed } from "../support/gated-store.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const HOUR = 3_600_000;

const orders = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("approve", async (ctx) => {
      const where = { channel: "general", topic: "approvals" };
      const a = await ctx.prompt("Approve?", { choices: { yes: "check", no: "x" }, where, timeout: "1h" });
      await ctx.reply(`${a.value} by ${a.by.name}`);
    });
    bot.command("invite", async (ctx) => {
      await ctx.reply(`invited: ${await ctx.startDialog(ctx.sender!.id, "pick")}`);
    });
    bot.command("pick", async (ctx) => {
      const size = await ctx
        .prompt("Which size?", { timeout: "1h" })
        .catch(() => ctx.prompt("Still there? Which size?", { timeout: "3h" }));
      const count = await ctx.prompt("How many?", { timeout: "3h" });
      await ctx.reply(`${count.text} × ${size.text}`);
    });
    bot.command("note", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "1h" });
      await ctx.reply(`noted: ${size.text}`);
      const count = await ctx.prompt("How many?", { timeout: "3h" });
      await ctx.reply(`${count.text} × ${size.text}`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

const BOTS = { orders: { email: BOT, definition: orders, extra: "handler_timeout: 1h" } };

let sandbox: Sandbox | undefined;
/** The daemon under test (`first`) and the other writer (`second`), stopped before the first. */
let second: InProcessDaemon | undefined;
let first: InProcessDaemon | undefined;
let dir: string | undefined;
let clock: TestClock;
/** The store both daemons share, closed by neither: closed last. */
let shared: StateBackend | undefined;
afterEach(async () => {
  await second?.stop();
  await first?.stop();
  await shared?.close();
  shared = undefined;
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  second = first = sandbox = dir = undefined;
});

/** Everything the bot said, once it said `count` things. */
const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

/** Writes through `gate` counted from now on. */
function counted(gate: StoreGate): { writes: number } {
  const count = { writes: 0 };
  const pass = gate.pass.bind(gate);
  gate.pass = (write) => {
    count.writes++;
    return pass(write);
  };
  return count;
}

/** The store both daemons use. */
let files: StateBackend;

/** Where the bot's dialogs live in the store, and its effect records. */
const DIALOGS = ["orders", "dialogs"];
const EFFECTS = ["orders", "effects"];

/** The first daemon, its dialog writes (or those under `path`) through `gate`. Resolves a direct message to the bot. */
async function firstUp(gate: StoreGate, path = DIALOGS) {
  clock = new TestClock();
  sandbox = await startSandbox({ clock });
  sandbox.control.createUser({
    email: BOT,
    full_name: "Orders",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  dir = await mkdtemp(join(tmpdir(), "bothost-dialog-log-moved-"));
  files = shared = await FileStore.open(join(dir, "store"), { now: () => clock.now() });
  first = await startInProcessDaemon(sandbox, BOTS, {
    store: gatedBackend(unclosed(files), path, gate),
    clock,
    stateDir: join(dir, "first"),
  });
  const box = sandbox;
  return (content: string) => box.control.sendAs(MEMBER, { type: "direct", to: [BOT], content }).id;
}

/**
 * The second daemon on the first one's store, its dialog writes (or those under `path`) through
 * `other`, if given; on the first one's clock, or on `own`; running `bots` (another version, say).
 */
async function secondUp(other?: StoreGate, own = clock, bots = BOTS, path = DIALOGS) {
  second = await startInProcessDaemon(sandbox!, bots, {
    store: unclosed(other ? gatedBackend(files, path, other) : files),
    clock: own,
    stateDir: join(dir!, "second"),
  });
}

/**
 * The first daemon, its dialog writes through `gate`, waiting at "Which size?" of the dialog a
 * direct message began; then the second daemon on the same store (its dialog writes through
 * `other`, if given, running `bots`), which read that dialog as it started. Resolves a direct
 * message to the bot.
 */
async function twoWaiting(gate: StoreGate, other?: StoreGate, bots: typeof BOTS = BOTS) {
  const dm = await firstUp(gate);
  dm("pick");
  expect(await said(1)).toEqual(["Which size?"]);
  await waiting(first!, 1);
  await secondUp(other, clock, bots);
  await waiting(second!, 1);
  return dm;
}

/**
 * Both daemons waiting ({@link twoWaiting}, the second's dialog writes through `other`), then
 * `act` (an answer, a deadline): each daemon's write of it held, the second's after `skip` writes.
 */
async function bothHeld(act: (dm: (content: string) => number) => unknown, skip = 0) {
  const gate = new StoreGate();
  const other = new StoreGate();
  const dm = await twoWaiting(gate, other);
  gate.mode = "hang";
  other.mode = "hang";
  other.skip = skip;
  await act(dm);
  await gate.stoppedAt(1);
  await other.stoppedAt(1);
  return { gate, other, dm };
}

/** `daemon`'s one dialog, once it waits at its question `step` (from 1). */
async function waiting(daemon: InProcessDaemon, step: number) {
  const bot = daemon.daemon.bots[0]!;
  await expect
    .poll(() => bot.dialogs().map((d) => [d.step, d.deadline !== undefined]), { timeout: 15_000 })
    .toEqual([[step, true]]);
}

/**
 * The first daemon's write of what `act` brings waits on `gate`; the second's lands, its run asks
 * `next`, and it stops: the log moved under the first. Then the first's write goes on; its writes
 * from there are counted.
 */
async function movedUnderFirst(gate: StoreGate, act: () => unknown, next: string) {
  gate.mode = "hang";
  await act();
  await gate.stoppedAt(1);
  expect(await said(2)).toEqual(["Which size?", next]);
  await waiting(second!, 2);
  await second!.stop();
  second = undefined;
  const count = counted(gate);
  gate.open();
  return count;
}

it("a deadline the log refuses as moved reads the dialog again: no write is repeated, the next answer is taken", async () => {
  const gate = new StoreGate();
  const dm = await twoWaiting(gate);
  // The first daemon's write of the passed deadline waits; the second's lands, and its run asks
  // again at a new step, then it stops: the log moved under the first.
  const count = await movedUnderFirst(gate, () => clock.advance(HOUR + 60_000), "Still there? Which size?");
  // Read again, the dialog waits at the new question: the answer is the person's next message.
  await waiting(first!, 2);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", "Still there? Which size?", "How many?"]);
  dm("2");
  expect(await said(4)).toEqual(["Which size?", "Still there? Which size?", "How many?", "2 × large"]);
  // Since the refused deadline: the answer, the next question, the answer, the end; the deadline
  // is not written again.
  // The dialog's end is written after its last reply.
  await expect.poll(() => first!.daemon.bots[0]!.dialogs()).toEqual([]);
  expect(count.writes).toBe(4);
  expect(first!.logged("the state store failed")).toEqual([]);
});

it("an answer the log refuses as moved is matched again: the other writer's copy, handled once, and no deadline loops", async () => {
  const gate = new StoreGate();
  const dm = await twoWaiting(gate);
  // Both daemons take the answer: the first one's write waits, the second's lands and its run
  // asks the next question, then it stops.
  const count = await movedUnderFirst(gate, () => dm("large"), "How many?");
  // Read again, the dialog waits at "How many?" (its deadline 3 h on): the first question's
  // deadline, passed, writes nothing.
  await waiting(first!, 2);
  await clock.advance(2 * HOUR);
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
  // Since the refused answer: the next answer and the end; the passed deadline writes nothing.
  await expect.poll(() => first!.daemon.bots[0]!.dialogs()).toEqual([]);
  expect(count.writes).toBe(2);
});

it("a deadline the log refuses as moved, recorded by a writer that stopped before running it: the dialog runs at once", async () => {
  // Both daemons' writes of the passed deadline wait. The second's bot stops (its lease lost)
  // with no time to finish; then its write lands: the deadline is recorded, its branch not run.
  const { gate, other, dm } = await bothHeld(() => clock.advance(HOUR + 60_000));
  await second!.daemon.bots[0]!.stop(0);
  other.open();
  await expect.poll(() => second!.logged("landed after the stop").length).toBe(1);
  await second!.stop();
  second = undefined;
  const count = counted(gate);
  gate.open();
  // Refused as moved, the first daemon finds the deadline recorded and not run, and runs it: the
  // question is asked again with no message of the person's first.
  expect(await said(2)).toEqual(["Which size?", "Still there? Which size?"]);
  await waiting(first!, 2);
  dm("large");
  expect(await said(3)).toEqual(["Which size?", "Still there? Which size?", "How many?"]);
  await waiting(first!, 3);
  // Since the refused deadline: the question asked again, its answer, the next question.
  expect(count.writes).toBe(3);
});

it("an answer both writers run: the run whose question the log refuses leaves the dialog to the log, and the next answer is taken", async () => {
  // Both daemons take the answer. The second's write lands first, and its run sends "How many?",
  // its question's write waiting; the first's write, the same append, is found made.
  const { gate, other, dm } = await bothHeld((send) => send("large"), 1);
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
  // The first daemon runs the answer too: its question (the one already sent, found) lands first.
  gate.open();
  await waiting(first!, 2);
  // The second run's question is refused as moved: the log holds it already, and the second
  // daemon's dialog waits there. The first daemon stops; the second takes the next answer.
  other.open();
  await waiting(second!, 2);
  await onlyOneAnswers("first", dm);
});

/** The `which` daemon stops; the other takes the answer to "How many?", and the dialog ends. */
async function onlyOneAnswers(which: "first" | "second", dm: (content: string) => number) {
  await (which === "first" ? first : second)!.stop();
  if (which === "first") first = undefined;
  else second = undefined;
  dm("2");
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
  await expect.poll(() => (first ?? second)!.daemon.bots[0]!.dialogs()).toEqual([]);
}

/** `as` calls `path` of the sandbox's API (`PATCH` or `POST`) with `body`. */
async function api(as: string, method: string, path: string, body: Record<string, string>) {
  const auth = Buffer.from(`${as}:${sandbox!.control.apiKeyOf(as)}`).toString("base64");
  const res = await fetch(`${sandbox!.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });
  expect(res.status).toBe(200);
}

it("a reaction the log refuses as moved is matched again: its question, moved meanwhile by the other writer, takes it", async () => {
  const gate = new StoreGate();
  const other = new StoreGate();
  const dm = await firstUp(gate);
  dm("approve");
  // The question, with its two buttons, waits in #general > approvals.
  const question = await vi.waitFor(
    () => {
      const m = sandbox!.control.messages().find((x) => String(x.content).startsWith("Approve?"));
      expect((sandbox!.control.messageView(m!.id as number)!.reactions as unknown[]).length).toBe(2);
      return m!.id as number;
    },
    { timeout: 10_000 },
  );
  await waiting(first!, 1);
  // The first daemon takes the member's reaction: its write waits. The question is moved to
  // another topic; the first daemon's move waits behind the answer.
  gate.mode = "hang";
  await api(MEMBER, "POST", `/messages/${question}/reactions`, { emoji_name: "check" });
  await gate.stoppedAt(1);
  // No Notification Bot notice in the new topic: this test is about the log's refusal.
  await api("owner@sandbox.example", "PATCH", `/messages/${question}`, {
    topic: "approvals 2",
    propagate_mode: "change_all",
    send_notification_to_new_thread: "false",
  });
  // The second daemon starts: it reads the move back and records it; the reaction's write fails,
  // until its bot stops (its lease lost).
  other.skip = 1;
  other.mode = "fail";
  await secondUp(other);
  await other.stoppedAt(1);
  expect(second!.logged("a dialog's topic moved")).toHaveLength(1);
  await second!.daemon.bots[0]!.stop(0);
  await second!.stop();
  second = undefined;
  // Refused as moved, the reaction is matched again: the question waits still, in its new topic.
  gate.open();
  expect(await said(2)).toEqual(["Approve?\n1. :check: yes\n2. :x: no", "yes by Mel Member"]);
  await expect.poll(() => first!.daemon.bots[0]!.dialogs()).toEqual([]);
});

it("an answer the log refuses as ended, the other writer having recorded it and ended the dialog: a copy, not an ordinary message", async () => {
  const gate = new StoreGate();
  const dm = await firstUp(gate);
  dm("pick");
  expect(await said(1)).toEqual(["Which size?"]);
  dm("large");
  expect(await said(2)).toEqual(["Which size?", "How many?"]);
  await waiting(first!, 2);
  await secondUp();
  await waiting(second!, 2);
  // Both daemons take the last answer: the first's write waits; the second records it, replies
  // and ends the dialog, then stops.
  gate.mode = "hang";
  dm("2");
  await gate.stoppedAt(1);
  expect(await said(3)).toEqual(["Which size?", "How many?", "2 × large"]);
  await expect.poll(() => second!.daemon.bots[0]!.dialogs()).toEqual([]);
  await second!.stop();
  second = undefined;
  // Refused as ended, the first daemon's answer is the copy of the one the log holds.
  gate.open();
  await expect.poll(() => first!.daemon.bots[0]!.dialogs()).toEqual([]);
  dm("hello");
  expect(await said(4)).toEqual(["Which size?", "How many?", "2 × large", "not a command: hello"]);
});

it("a dialog the bot starts, begun first by the other writer, which stopped before running it: it runs here", async () => {
  const gate = new StoreGate();
  const other = new StoreGate();
  const dm = await firstUp(gate);
  // The second daemon's clock is 5 s ahead: its start of the dialog is another append.
  await secondUp(other, new TestClock({ start: clock.now() + 5_000 }));
  // Both daemons start the dialog and their writes wait; the second's bot stops (its lease
  // lost), then its write lands: the dialog is begun, not run.
  gate.mode = "hang";
  other.mode = "hang";
  dm("invite");
  await gate.stoppedAt(1);
  await other.stoppedAt(1);
  await second!.daemon.bots[0]!.stop(0);
  other.open();
  const heads = files.namespace("orders").namespace("dialogs");
  await expect.poll(async () => (await heads.list("h:")).length).toBe(1);
  await second!.stop();
  second = undefined;
  // Refused as moved, the first daemon's start says the dialog exists, and runs it.
  gate.open();
  expect(await said(2)).toEqual(["invited: false", "Which size?"]);
  await waiting(first!, 1);
  dm("large");
  expect(await said(3)).toEqual(["invited: false", "Which size?", "How many?"]);
});

/**
 * The bot in another version (a rolling deploy: the old and the new instance both up): its first
 * question is the same, its second another. With `flaky`, its run of an answer fails that many
 * times first (and is run again after a second).
 */
function newVersion(flaky = 0): typeof BOTS {
  let fails = flaky;
  const definition = defineBot({
    setup(bot) {
      bot.track("reactions");
      bot.command("pick", async (ctx) => {
        const size = await ctx.prompt("Which size?", { timeout: "1h" });
        if (fails-- > 0) throw new Error("a passing fault");
        const count = await ctx.prompt("How many pieces?", { timeout: "3h" });
        await ctx.reply(`${count.text} pieces × ${size.text}`);
      });
      bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
    },
  });
  const extra = "handler_timeout: 1h\nretries: { attempts: 2, backoff: 1s }";
  return { orders: { email: BOT, definition, extra } };
}

const ELSEWHERE = "another instance runs this dialog";

/**
 * Both daemons waiting ({@link twoWaiting}, the second running `bots`), then both run the answer
 * "large": each one's next write (its question's) is held, the first's let through. Resolves the
 * second's gate, and a direct message to the bot.
 */
async function bothRun(bots: typeof BOTS) {
  const gate = new StoreGate();
  const other = new StoreGate();
  const dm = await twoWaiting(gate, other, bots);
  for (const g of [gate, other]) {
    g.mode = "hang";
    g.skip = 1;
  }
  dm("large");
  await gate.stoppedAt(1);
  await other.stoppedAt(1);
  gate.open();
  await waiting(first!, 2);
  return { other, dm };
}

/** The second daemon, its run stopped quietly, waits at the log's question; it stops, and the first takes the answer. */
async function firstTakesNext(dm: (content: string) => number) {
  await expect.poll(() => second!.logged(ELSEWHERE).length).toBe(1);
  expect(second!.logged("was not recorded before the stop")).toEqual([]);
  await waiting(second!, 2);
  await onlyOneAnswers("second", dm);
}

it("two versions run one answer: the question the log refuses as moved is no failure, and the dialog goes on at the log's", async () => {
  const { other, dm } = await bothRun(newVersion());
  // The second daemon's question (its send found made: the first's message, sent at the same
  // step) is refused as moved: its run stops quietly, its dialog waits at the log's question.
  other.open();
  await firstTakesNext(dm);
});

it("two versions run one answer, the second after a failure: its question refused as moved does not end the dialog as failed", async () => {
  // The second daemon's run of the answer fails once; run again a second later (its last
  // attempt), it asks its own question, held.
  const { other, dm } = await bothRun(newVersion(1));
  expect(second!.logged("running it again after a pause")).toHaveLength(1);
  // Refused as moved, that attempt is no failure: nothing is kept, the dialog is not ended.
  other.open();
  await expect.poll(() => second!.logged(ELSEWHERE).length).toBe(1);
  expect(second!.logged("kept as dead letter")).toEqual([]);
  await firstTakesNext(dm);
});

it("an answer both writers run at once: what its run says before the next question is said once", async () => {
  // Both daemons' effect records (what their runs said) through one gate.
  const fx = new StoreGate();
  const dm = await firstUp(fx, EFFECTS);
  dm("note");
  expect(await said(1)).toEqual(["Which size?"]);
  await waiting(first!, 1);
  await secondUp(fx, clock, BOTS, EFFECTS);
  await waiting(second!, 1);
  // Both daemons run the answer, each having read that nothing was said yet: each one's record of
  // its reply's send waits.
  fx.mode = "hang";
  dm("large");
  await fx.stoppedAt(2);
  fx.open();
  // One of them says it; the other finds it said, and each goes on to the next question, asked
  // once too: the log keeps one run's.
  await waiting(first!, 2);
  await waiting(second!, 2);
  expect(await said(3)).toEqual(["Which size?", "noted: large", "How many?"]);
});
