/**
 * A bot that handles no message, only cron jobs, whose job's record of a run (the occurrence under
 * way, its run done) the state store fails: the bot is not ready, as `/readyz` and `/metrics` say
 * over HTTP, from that write on, and ready again once the record of a later run lands. A real
 * daemon in this process against the sandbox, on a held test clock; the writes under the bot's
 * `jobs` namespace pass a gate.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
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

it("a cron-only bot whose job's run record the store fails is not ready until a later record lands", async () => {
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
  const url = running.daemon.http!.url!;
  const readyz = async () =>
    (await (await fetch(`${url}/readyz`)).json()) as {
      bots: { ready: boolean; store?: { code: string } }[];
    };
  const failing = async () =>
    sampleValue(
      parsePrometheus(await (await fetch(`${url}/metrics`)).text()),
      "bothost_state_store_failing",
      { bot: "ticker" },
    );
  await poll(async () => (await readyz()).bots[0]!.ready).toBe(true);
  const toNextMinute = () => clock.advance(60_000 - (clock.now() % 60_000));

  gate.mode = "fail";
  await toNextMinute();
  await poll(() => running.logged(RECORD_FAILED).length).toBeGreaterThan(0);
  await poll(async () => (await readyz()).bots[0]).toMatchObject({
    ready: false,
    store: { code: "STATE_UNAVAILABLE" },
  });
  expect(await failing()).toBe(1);

  // The store takes the writes again: the next minute's run records itself, and says so.
  gate.open();
  await toNextMinute();
  await poll(async () => (await readyz()).bots[0]!.ready).toBe(true);
  expect(await failing()).toBe(0);
});
