/**
 * The embedded store's disk full: its writes refused for real by the OS (test/support/
 * file-size-limit.ts: each append to the state log fails, the store keeps the changes in memory
 * and says `STATE_IO`), then space back. A real daemon in this process against the
 * sandbox over HTTP, on the test clock.
 */
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { STORE_OUTAGE_LINE, STORE_WAIT_LINE } from "../../src/pipeline/handler-failures.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { fillDiskAt, limitFiles } from "../support/file-size-limit.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid, saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";

let up: GatedDaemon | undefined;
/** The daemon running now. */
let running: InProcessDaemon;
afterEach(async () => {
  limitFiles("unlimited");
  await closeGatedDaemon(up);
  up = undefined;
});

/** The state log can grow no more: the disk is full, as far as the store can tell. */
const fillDisk = () => fillDiskAt(join(up!.dir, "state.log"));

let filled = false;
const orders = defineBot({
  setup(bot) {
    bot.command("size", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await ctx.reply(`${size.text} it is.`);
    });
    bot.on("message", async (ctx) => {
      if (ctx.text === "quiet") return;
      const n = ((await ctx.state.get<number>("orders")) ?? 0) + 1;
      await ctx.state.set("orders", n);
      await ctx.reply(`${ctx.text}: order ${n}`);
      // The disk fills right after the reply (the first time): neither its record nor the
      // message's mark lands.
      if (ctx.text === "last before full" && !filled) {
        filled = true;
        fillDisk();
      }
    });
  },
});

async function start(): Promise<void> {
  up = await startGatedDaemon({ name: "orders", email: BOT, fullName: "Orders", definition: orders });
  running = up.running;
}

/**
 * Stop the daemon while the disk is still full: its store's last flush is refused (the stop fails
 * with the store's error), so the disk holds what a kill -9 would have left. Then start it again
 * with space back.
 */
async function stopFullThenStart(): Promise<void> {
  await expect(running.stop()).rejects.toMatchObject({ code: "STATE_IO" });
  running = await up!.restart(() => limitFiles("unlimited"));
}

const said = (count: number) => saidAtLeast(up!.sandbox, BOT, count);

/** Runs every attempt of the default retries (after 2, 4, 8 and 16 s), each failing on the full disk. */
async function everyAttemptFails(): Promise<void> {
  for (let n = 1; n <= 4; n++) {
    await expect.poll(() => running.logged(`${STORE_OUTAGE_LINE}; running`).length).toBe(n);
    await up!.clock.advance(2_000 * 2 ** (n - 1));
  }
  await expect.poll(() => running.logged(STORE_WAIT_LINE).length).toBe(1);
}

/** "a" answered and recorded, then the disk full, then "b": every attempt of its run fails. */
async function bWaitsOnFullDisk(): Promise<void> {
  await start();
  const a = up!.dm("a");
  expect(await said(1)).toEqual(["a: order 1"]);
  await running.ledger.until("orders", a, 5_000, () => new Error("a never recorded handled"));
  fillDisk();
  up!.dm("b");
  await everyAttemptFails();
}

it("a message that comes while the disk is full waits for it, no handler failure, no dead letter, and is answered once when space is back", async () => {
  await bWaitsOnFullDisk();
  // Its reply could not be claimed durably: not made.
  expect(botSaid(up!.sandbox, BOT)).toEqual(["a: order 1"]);
  expect(running.logged("handler failed")).toEqual([]);
  expect(running.logged("could not keep the failed event as a dead letter")).toEqual([]);
  // Messages handled meanwhile with nothing to record first: their marks' saves fail, said once.
  const quiet = () =>
    up!.sandbox.control.sendAs("owner@sandbox.example", { type: "direct", to: [BOT], content: "quiet" }).id;
  quiet();
  const last = quiet();
  await running.ledger.until("orders", last, 5_000, () => new Error("the quiet ones never handled"));
  expect(running.logged("could not record handled messages")).toHaveLength(1);
  limitFiles("unlimited");
  await up!.clock.advance(1_000);
  expect(await said(2)).toEqual(["a: order 1", "b: order 2"]);
  await expect
    .poll(() => running.logged("handled messages are recorded in the state store again"))
    .toHaveLength(1);
  expect(running.logged("could not record handled messages")).toHaveLength(1);
  // Nothing doubled after a restart: every write the disk refused landed once space was back.
  running = await up!.restart();
  up!.dm("c");
  expect(await said(3)).toEqual(["a: order 1", "b: order 2", "c: order 3"]);
  expect(await running.daemon.letters.list()).toEqual([]);
});

it("stopped while the disk is still full (all a kill leaves on disk): the next start answers the message once", async () => {
  await bWaitsOnFullDisk();
  await stopFullThenStart();
  expect(await said(2)).toEqual(["a: order 1", "b: order 2"]);
  up!.dm("c");
  expect(await said(3)).toEqual(["a: order 1", "b: order 2", "c: order 3"]);
  expect(running.logged("handler failed")).toEqual([]);
});

it("a reply made just before the disk filled is not made again after a restart", async () => {
  await start();
  up!.dm("last before full");
  expect(await said(1)).toEqual(["last before full: order 1"]);
  // Its result and the message's handled mark are refused; only its claim, made before, is on disk.
  await expect.poll(() => running.logged("could not record handled messages").length).toBeGreaterThan(0);
  // Some time passes: the restarted daemon takes the claim for one a crash cut short.
  await up!.clock.advance(1_000);
  await stopFullThenStart();
  up!.dm("next");
  expect(await said(2)).toEqual(["last before full: order 1", "next: order 2"]);
  expect(running.logged("handler failed")).toEqual([]);
});

it("a dialog's question that comes while the disk is full is asked once when space is back, and its answer taken", async () => {
  await start();
  fillDisk();
  up!.dm("size");
  await expect
    .poll(() => running.logged("the state store failed a dialog's write; trying again").length)
    .toBeGreaterThan(0);
  // Its send's record could not be made durable: not asked.
  expect(botSaid(up!.sandbox, BOT)).toEqual([]);
  limitFiles("unlimited");
  // Time passes (the tries' pauses) until it is asked.
  await expect
    .poll(async () => {
      await up!.clock.advance(250);
      return botSaid(up!.sandbox, BOT).length;
    })
    .toBe(1);
  up!.dm("L");
  expect(await said(2)).toEqual(["Which size?", "L it is."]);
  running = await up!.restart();
  up!.dm("a");
  expect(await said(3)).toEqual(["Which size?", "L it is.", "a: order 1"]);
  expect(running.logged("handler failed")).toEqual([]);
});
