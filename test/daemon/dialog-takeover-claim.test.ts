/**
 * A takeover mid-send: the instance running the bot sends a dialog's first question and is killed
 * before recording the send (its effect record left pending, the question not in the dialog's
 * log). The instance that takes the bot over had been standing by since before that send; it
 * replays the message that began the dialog, finds the question sent (a read-back), records it,
 * and the dialog waits there at once, so the person's answer gets the next question. It does not
 * wait on the pending record as on a run still going (for {@link CLAIM_WAIT_MS}): meanwhile a
 * short handler timeout let the answer through as an ordinary message, with no dialog to take it.
 * Two real daemons in this process against the sandbox over HTTP, on one test clock and one file
 * store; the first one's effect records pass a gate.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { CLAIM_WAIT_MS } from "../../src/effects/effect-records.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { gatedBackend, StoreGate, unclosed } from "../support/gated-store.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "standup-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

const standup = defineBot({
  setup(bot) {
    bot.command("standup", async (ctx) => {
      const done = await ctx.prompt("Q1 yesterday?", { timeout: "1h" });
      const next = await ctx.prompt("Q2 today?", { timeout: "1h" });
      await ctx.reply(`summary: ${done.text} | ${next.text}`);
    });
  },
});

const BOTS = { standup: { email: BOT, definition: standup, extra: "handler_timeout: 1h" } };

let sandbox: Sandbox | undefined;
let first: InProcessDaemon | undefined;
let second: InProcessDaemon | undefined;
let files: StateBackend | undefined;
let dir: string | undefined;
afterEach(async () => {
  await second?.stop();
  await first?.stop({ deadlineMs: 0 });
  await files?.close();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  first = second = files = sandbox = dir = undefined;
});

it("the instance that takes the bot over finds the question sent and unrecorded: the dialog waits there at once", async () => {
  const clock = new TestClock();
  sandbox = await startSandbox({ clock });
  sandbox.control.createUser({
    email: BOT,
    full_name: "Standup",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
  dir = await mkdtemp(join(tmpdir(), "bothost-dialog-takeover-"));
  files = await FileStore.open(join(dir, "store"), { now: () => clock.now() });
  const fx = new StoreGate();
  first = await startInProcessDaemon(sandbox, BOTS, {
    store: gatedBackend(unclosed(files), ["standup", "effects"], fx),
    clock,
    stateDir: join(dir, "first"),
  });
  // The other instance, on standby: up before the dialog begins, the bot stopped there.
  second = await startInProcessDaemon(sandbox, BOTS, {
    store: unclosed(files),
    clock,
    stateDir: join(dir, "second"),
  });
  const standby = second.daemon.bots[0]!;
  await standby.stop(0);

  // The first instance's claim of the question's send lands; the send is made; the record of
  // what it made is held, and the instance is cut off there, as a kill -9 cuts it.
  fx.skip = 1;
  fx.mode = "hang";
  const dm = (content: string) => sandbox!.control.sendAs(MEMBER, { type: "direct", to: [BOT], content }).id;
  dm("standup");
  await fx.stoppedAt(1);
  expect(await saidAtLeast(sandbox, BOT, 1)).toEqual(["Q1 yesterday?"]);
  await first.stop({ deadlineMs: 0 });
  first = undefined;

  // Its lease expired meanwhile, the other instance takes the bot: the question is found sent, once.
  await clock.advance(1_000);
  await standby.start();
  await expect
    .poll(() => standby.dialogs().map((d) => [d.step, d.deadline !== undefined]), {
      timeout: CLAIM_WAIT_MS / 2,
    })
    .toEqual([[1, true]]);
  dm("did a");
  expect(await saidAtLeast(sandbox, BOT, 2)).toEqual(["Q1 yesterday?", "Q2 today?"]);
  dm("do b");
  expect(await saidAtLeast(sandbox, BOT, 3)).toEqual(["Q1 yesterday?", "Q2 today?", "summary: did a | do b"]);
});
