/**
 * A message whose handler replied and applied its `ctx.state` write, but which was never marked
 * handled (a kill -9, a power loss), runs again at the next start when it is younger than
 * `replay.max_age`: however long the bot was down within that age, the re-run finds its effect
 * records and its applied marker, and says and counts nothing twice. A real daemon in this
 * process against the sandbox over HTTP, on a held test clock that the store's expiry follows;
 * the writes that mark messages handled (the bot's `runtime` namespace) pass a gate that refuses
 * them, as a crash before the mark's commit leaves them unwritten.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { effectRecordsTtlMs } from "../../src/daemon/wire-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "tally-bot@sandbox.example";
const HOUR = 3_600_000;

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

const counter = defineBot({
  setup(bot) {
    bot.command("count", async (ctx) => {
      await ctx.state.update<number>("count", (n) => (n ?? 0) + 1);
      await ctx.reply("Counted.");
    });
    bot.command("read", async (ctx) => ctx.reply(`count: ${(await ctx.state.get<number>("count")) ?? 0}`));
  },
});

/** `expect.poll` with 15 s of real time: the clock and the gate decide; the bound is for a loaded machine. */
const poll = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 15_000 });

it.each([
  ["the default max_age (24 h), down 7 hours", "", 7 * HOUR],
  ["a max_age of 3 days, down 2 days", "replay: { max_age: 3d }", 48 * HOUR],
])("%s: the message caught up again repeats neither its reply nor its write", async (_, extra, downMs) => {
  const gate = new StoreGate();
  up = await startGatedDaemon({
    name: "tally",
    email: BOT,
    fullName: "Tally",
    definition: counter,
    gate,
    gated: "runtime",
    ...(extra ? { extra } : {}),
    clock: new TestClock({ held: true }),
  });
  const said = () => botSaid(up!.sandbox, BOT);
  gate.mode = "fail";
  up.dm("count");
  // Replied and counted; then the ledger's mark was refused: the message is unmarked in the store.
  await poll(said).toEqual(["Counted."]);
  await poll(
    () => up!.running.logged("could not record handled messages in the state store").length,
  ).not.toBe(0);
  await up.restart(
    async () => {
      gate.mode = "open";
      await up!.clock.advance(downMs);
    },
    { deadlineMs: 0 },
  );
  await poll(() => up!.running.logged("caught up after a new queue").length).toBe(1);
  up.dm("read");
  await poll(() => said().some((text) => text.startsWith("count:"))).toBe(true);
  expect(said()).toEqual(["Counted.", "count: 1"]);
});

it("keeps the records 6 hours at least, and past max_age when messages are caught up", () => {
  const replay = (maxMessages: number, maxAgeMs: number) => ({ replay: { maxMessages, maxAgeMs } });
  expect(effectRecordsTtlMs(replay(1_000, 24 * HOUR))).toBe(25 * HOUR);
  expect(effectRecordsTtlMs(replay(1_000, 3 * HOUR))).toBe(6 * HOUR);
  expect(effectRecordsTtlMs(replay(1_000, 0))).toBe(6 * HOUR);
  // Catch-up off, or no queue to catch up from: no message runs again after a start.
  expect(effectRecordsTtlMs(replay(0, 30 * 24 * HOUR))).toBe(6 * HOUR);
  expect(effectRecordsTtlMs({ mode: "webhook", ...replay(1_000, 24 * HOUR) })).toBe(6 * HOUR);
});
