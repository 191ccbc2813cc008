/**
 * A cron job's record of its run (the occurrence under way, its run done) that the state store
 * fails is a write of the bot the store's outage failed, as its other writes are: the bot's store
 * health is told (the outage said once, the write counted in `/metrics` over HTTP), so that a bot
 * whose every write fails (a full disk, Redis out of reach) is not ready while it lasts. A real
 * daemon in this process against the sandbox, on a held test clock; the writes under the bot's
 * `jobs` namespace pass a gate (its other writes land, and end the outage as they do).
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { STORE_FAILING_LINE } from "../../src/pipeline/store-health.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { parsePrometheus, sampleValue } from "../support/prometheus-text.ts";

const RECORD_FAILED = "could not record a cron job's run or first start in the state store";

const ticker = defineBot({
  setup(bot) {
    bot.cron("* * * * *", { id: "tick" }, () => {});
  },
});

let up: GatedDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

/** `expect.poll` with 15 s of real time: the clock and the gate decide; the bound is for a loaded machine. */
const poll = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 15_000 });

it("a cron job's run record the store fails tells the bot's store health: said, and counted", async () => {
  const gate = new StoreGate();
  up = await startGatedDaemon({
    name: "ticker",
    email: "ticker-bot@sandbox.example",
    fullName: "Ticker",
    definition: ticker,
    gate,
    gated: "jobs",
    global: "http:\n  listen: 127.0.0.1:0",
    clock: new TestClock({ held: true }),
  });
  const { running, clock } = up;
  const writeFailures = async () =>
    sampleValue(
      parsePrometheus(await (await fetch(`${running.daemon.http!.url!}/metrics`)).text()),
      "bothost_state_store_write_failures_total",
      { bot: "ticker", code: "STATE_UNAVAILABLE" },
    );
  expect(await writeFailures()).toBe(0);

  gate.mode = "fail";
  // To the next whole minute: the job fires, and its records are refused.
  await clock.advance(60_000 - (clock.now() % 60_000));
  await poll(() => running.logged(RECORD_FAILED).length).toBe(2);
  expect(await writeFailures()).toBe(2);
  expect(running.logged(STORE_FAILING_LINE).length).toBeGreaterThan(0);
});
