/**
 * A run the state store fails (a Redis outage: its writes refused as `STATE_UNAVAILABLE`, or
 * `STATE_FENCED` once the bot's lease is lost) is no failure of the bot's code: it is logged as a
 * warning naming the store's outage (its code and message, no stack), not as "handler failed",
 * and runs again as any failed run does, once the store is back. A handler's own error during
 * the outage is still its failure. An outage longer than every attempt keeps the event nowhere: it
 * waits for the store in its conversation's order (no dead letter, no handler failure counted), or,
 * cut off by the stop, is left unmarked for the next start to catch up. A real daemon in this process against the sandbox over HTTP,
 * on a test clock that stands still between the test's moves (each pause ends where the test
 * passes it, so the runs counted are exact); the bot's `ctx.state` writes pass a gate.
 */
import { rm } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { STORE_OUTAGE_LINE, STORE_WAIT_LINE } from "../../src/pipeline/handler-failures.ts";
import { STORE_FAILING_LINE } from "../../src/pipeline/store-health.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";
const RETRY_LINE = `${STORE_OUTAGE_LINE}; running it again after a pause`;

const orders = defineBot({
  setup(bot) {
    // Its write is staged, applied once the handler returned: the store fails the run after it.
    bot.command("order", async (ctx) => {
      await ctx.state.set("orders", 1);
      await ctx.reply("Ordered.");
    });
    // Its write is made at once: the handler passes the store's error on.
    bot.command("note", async (ctx) => {
      await ctx.state.immediate.set("note", ctx.text);
      await ctx.reply("Noted.");
    });
    // Its own error, made of the store's: the handler's failure.
    bot.command("tally", async (ctx) => {
      try {
        await ctx.state.immediate.set("tally", 1);
      } catch {
        throw new Error("the tally could not be kept");
      }
    });
    bot.command("orders", async (ctx) =>
      ctx.reply(`orders: ${(await ctx.state.get<number>("orders")) ?? 0}`),
    );
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

/** `expect.poll` with 15 s of real time: the clock and the gate decide; the bound is for a loaded machine. */
const poll = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 15_000 });

/** Everything the bot said, once it said `count` things. */
const said = (count: number): Promise<string[]> => saidAtLeast(sandbox!, BOT, count);

/** The daemon on a store whose `ctx.state` writes pass `gate`; resolves a direct message to the bot. */
async function start(gate: StoreGate, global?: string) {
  const up = await startGatedDaemon({
    name: "orders",
    email: BOT,
    fullName: "Orders",
    definition: orders,
    gate,
    gated: "kv",
    ...(global ? { global } : {}),
    clock: new TestClock({ held: true }),
  });
  ({ sandbox, running, clock, dir } = up);
  return up.dm;
}

/** The lines logged at warn or above. */
const warnings = () => running!.logged("").filter((l) => (l.level as number) >= 40);

it.each([
  ["its staged writes", "order", "Ordered."],
  ["a write the handler passes on", "note", "Noted."],
])(
  "a run the store fails (%s) is logged as the store's outage, and runs again once it is back",
  async (_, command, reply) => {
    const gate = new StoreGate();
    const dm = await start(gate);
    gate.mode = "fail";
    dm(command);
    await poll(() => running!.logged(RETRY_LINE).length).toBe(1);
    const outage = { code: "STATE_UNAVAILABLE", reason: expect.stringMatching(/refused a write/) };
    expect(
      warnings().map(({ level, msg, code, reason, err }) => ({ level, msg, code, reason, err })),
    ).toEqual([
      // The outage said once (store-health.ts), then the run that met it.
      { level: 40, msg: STORE_FAILING_LINE, ...outage, err: undefined },
      { level: 40, msg: STORE_OUTAGE_LINE, ...outage, err: undefined },
      { level: 40, msg: RETRY_LINE, ...outage, err: undefined },
    ]);
    gate.open();
    await clock.advance(2_000);
    await poll(() => running!.logged("handler succeeded on a later attempt").length).toBe(1);
    dm("orders");
    const orders = command === "order" ? 1 : 0;
    // The reply made before the outage failed the run is not made again.
    expect(await said(2)).toEqual([reply, `orders: ${orders}`]);
    expect(running!.logged("handler failed")).toEqual([]);
    expect(warnings()).toHaveLength(3);
  },
);

it("a handler's own error during the outage is still its failure", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  gate.mode = "fail";
  dm("tally");
  await poll(() => running!.logged("handler failed; running it again after a pause").length).toBe(1);
  expect(running!.logged("handler failed")[0]).toMatchObject({
    level: 50,
    err: { message: "the tally could not be kept", stack: expect.stringContaining("Error") },
  });
  expect(running!.logged(STORE_OUTAGE_LINE)).toEqual([]);
});

/** A counter's value for the bot's message events (0 when never counted). */
async function counted(name: string): Promise<number> {
  const metric = running!.daemon.metrics!.registry.getSingleMetric(name) as unknown as {
    get(): Promise<{ values: { labels: Record<string, string>; value: number }[] }>;
  };
  const values = (await metric.get()).values;
  return values.find((v) => v.labels.bot === "orders" && v.labels.type === "message")?.value ?? 0;
}

/** Runs every attempt of the default retries (5, after 2, 4, 8 and 16 s), each failing on the outage. */
async function everyAttemptFails(): Promise<void> {
  for (let n = 1; n <= 4; n++) {
    await poll(() => running!.logged(RETRY_LINE).length).toBe(n);
    await clock.advance(2_000 * 2 ** (n - 1));
  }
  await poll(() => running!.logged(STORE_WAIT_LINE).length).toBe(1);
}

it("an outage longer than every attempt: no handler failure, no dead letter; the message waits for the store in its order", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, "http:\n  listen: 127.0.0.1:0");
  gate.mode = "fail";
  dm("order");
  dm("orders");
  await everyAttemptFails();
  expect(running!.logged(STORE_OUTAGE_LINE)).toHaveLength(5 + 4);
  // Still failing: run again after 1 s, then 2 s (one run at a time for the bot).
  await clock.advance(1_000);
  await poll(() => running!.logged(STORE_OUTAGE_LINE).length).toBe(5 + 4 + 1);
  await clock.advance(2_000);
  await poll(() => running!.logged(STORE_OUTAGE_LINE).length).toBe(5 + 4 + 2);
  expect(running!.logged("handler failed")).toEqual([]);
  expect(await running!.daemon.letters.list()).toEqual([]);
  gate.open();
  await clock.advance(4_000);
  await poll(() => running!.logged("handler succeeded on a later attempt").length).toBe(1);
  // The conversation's next message waited for it: it reads what the run wrote.
  expect(await said(2)).toEqual(["Ordered.", "orders: 1"]);
  expect(await running!.daemon.letters.list()).toEqual([]);
  expect(await counted("bothost_events_failed_total")).toBe(0);
  expect(await counted("bothost_events_store_outage_total")).toBe(7);
  expect(await counted("bothost_dead_letters_total")).toBe(0);
});

it("a run waiting for the store, cut off by the stop, is left unmarked: the next start catches it up", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  const bot = running!.daemon.bots[0]!;
  gate.mode = "fail";
  dm("order");
  await everyAttemptFails();
  await bot.stop(1_000);
  expect(running!.logged("a run waiting for the state store was cut off by the stop")).toHaveLength(1);
  expect(await running!.daemon.letters.list()).toEqual([]);
  gate.open();
  await bot.start();
  dm("orders");
  // Caught up again: its write applied, its reply (made before the outage failed it) not made twice.
  expect(await said(2)).toEqual(["Ordered.", "orders: 1"]);
  expect(running!.logged("handler failed")).toEqual([]);
});

it("runs waiting for the store run again one at a time for the bot, however many conversations wait", async () => {
  const gate = new StoreGate();
  const dm = await start(gate);
  gate.mode = "fail";
  dm("order");
  sandbox!.control.sendAs("owner@sandbox.example", { type: "direct", to: [BOT], content: "order" });
  for (let n = 1; n <= 4; n++) {
    await poll(() => running!.logged(RETRY_LINE).length).toBe(2 * n);
    await clock.advance(2_000 * 2 ** (n - 1));
  }
  await poll(() => running!.logged(STORE_WAIT_LINE).length).toBe(2);
  const failures = () => running!.logged(STORE_OUTAGE_LINE).length;
  expect(failures()).toBe(2 * (5 + 4));
  // One run after 1 s, the other's 2 s after it, the first's again 4 s after that.
  await clock.advance(1_000);
  await poll(failures).toBe(19);
  await clock.advance(2_000);
  await poll(failures).toBe(20);
  await clock.advance(4_000);
  await poll(failures).toBe(21);
  gate.open();
  await clock.advance(8_000);
  // The store is back: the first run through lets the other go at once.
  await poll(() => running!.logged("handler succeeded on a later attempt").length).toBe(2);
  expect(failures()).toBe(21);
  expect(await said(2)).toEqual(["Ordered.", "Ordered."]);
});
