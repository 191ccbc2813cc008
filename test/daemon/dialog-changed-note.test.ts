/**
 * The note of a dialog stopped by changed code is kept with its end, as an operator's is: a send
 * of it that fails (the process gone before it was made, the server out of reach) leaves it to
 * the next start, which says it once, in the conversation's order; one that landed with its
 * answer lost is found there and not said again. A real daemon in this process against the
 * sandbox over HTTP, on the test clock, restarted on the same store.
 */
import { rm } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { FailOptions } from "../../src/sandbox/faults.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid, saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";
const CHANGED = "The bot changed under our conversation: start again.";

/** The code after an update: its question has another id, which stops a dialog waiting at it. */
let updated = false;

const orders = defineBot({
  setup(bot) {
    bot.command("pick", async (ctx) => {
      const id = updated ? "size-2" : "size";
      const size = await ctx.prompt("Which size?", { id, texts: { changed: CHANGED } });
      await ctx.reply(`One ${size.text}.`);
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let up: GatedDaemon | undefined;
let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
afterEach(async () => {
  updated = false;
  await running?.stop();
  await sandbox?.stop();
  if (up) await rm(up.dir, { recursive: true, force: true });
});

/** Everything the bot said, once it said `count` things. */
const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

/**
 * The daemon's one dialog waiting at its question; then the code updated, and the person's answer
 * stops the dialog, the note's send failing as `fault` says.
 */
async function stoppedByUpdate(fault: FailOptions) {
  up = await startGatedDaemon({ name: "orders", email: BOT, fullName: "Orders", definition: orders });
  ({ sandbox, running } = up);
  up.dm("pick");
  expect(await said(1)).toEqual(["Which size?"]);
  const bot = running.daemon.bots[0]!;
  await expect.poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  updated = true;
  sandbox.control.failNext(1, { ...fault, paths: [/^\/messages$/], methods: ["POST"] });
  up.dm("large");
  await expect.poll(() => running!.logged("could not tell the person their dialog ended")).toHaveLength(1);
  await expect.poll(() => bot.dialogs()).toEqual([]);
  return up;
}

it("the note's send fails: the next start says it once, before what was caught up", async () => {
  const { dm, restart } = await stoppedByUpdate({ status: 500 });
  expect(botSaid(sandbox!, BOT)).toEqual(["Which size?"]);
  // The person writes while the daemon is down: answered after the note.
  running = await restart(() => dm("hello"));
  expect(await said(3)).toEqual(["Which size?", CHANGED, "not a command: hello"]);
  running = await restart();
  dm("again");
  expect(await said(4)).toEqual(["Which size?", CHANGED, "not a command: hello", "not a command: again"]);
});

it("the note's send lands with its answer lost: the next start finds it, and says it no more", async () => {
  const { dm, restart } = await stoppedByUpdate({ status: 502, after: true });
  expect(botSaid(sandbox!, BOT)).toEqual(["Which size?", CHANGED]);
  running = await restart();
  dm("hello");
  expect(await said(3)).toEqual(["Which size?", CHANGED, "not a command: hello"]);
});
