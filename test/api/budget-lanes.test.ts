/**
 * Calls waiting for the account's budget start live first: a background call (a dead letter's
 * replay, a read-back at a start) that asked earlier gives way, yet gets every fourth start while
 * both lanes wait. A client against the sandbox over HTTP, its rate limits on (1 call a minute,
 * the client planning with the same), on a manual clock; the order is the sandbox's, in the order
 * it took the sends.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import type { CallLane } from "../../src/api/budget-line.ts";
import { watchBudgetWaits } from "../../src/api/budget-waits.ts";
import { backgroundClientOf } from "../../src/api/client-lane.ts";
import type { Client } from "../../src/api/create-client.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { flushAsync, type ManualClock } from "../support/manual-clock.ts";
import { oneCallAMinute } from "../support/minute-client.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "bot@sandbox.example";
let clock: ManualClock;
let sandbox: Sandbox;
let client: Client;

beforeEach(async () => {
  ({ clock, sandbox, client } = await oneCallAMinute(BOT));
});
afterEach(() => sandbox.stop());

const send = (content: string, lane?: CallLane, via = client) =>
  via.messages.send({ type: "channel", to: "general", topic: "t", content }, lane ? { lane } : {});

/** Spend the minute, then ask for `calls` in order (through `via`, default the client); the minute passes until all were made. */
async function orderOf(calls: [string, CallLane?, Client?][]): Promise<string[]> {
  await send("spent");
  const sent = calls.map(([content, lane, via]) => send(content, lane, via));
  await flushAsync();
  // One call a minute, each made before the next minute passes.
  for (let made = 1; made <= calls.length; made++) {
    await clock.tick(60_000);
    await expect.poll(() => botSaid(sandbox, BOT).length).toBe(made + 1);
  }
  await Promise.all(sent);
  expect(sandbox.control.requests.filter((r) => r.status === 429)).toEqual([]);
  return botSaid(sandbox, BOT).slice(1);
}

it("a live call waiting for the budget starts before the background calls that asked first", async () => {
  expect(
    await orderOf([["bg 1", "background"], ["bg 2", "background"], ["bg 3", "background"], ["live"]]),
  ).toEqual(["live", "bg 1", "bg 2", "bg 3"]);
});

it("background calls get every fourth start while live calls keep waiting", async () => {
  const live = Array.from({ length: 7 }, (_, i): [string] => [`live ${i + 1}`]);
  expect(await orderOf([["bg 1", "background"], ["bg 2", "background"], ...live])).toEqual([
    "live 1",
    "live 2",
    "live 3",
    "bg 1",
    "live 4",
    "live 5",
    "live 6",
    "bg 2",
    "live 7",
  ]);
});

it("a client in the background lane waits there unless a call names its lane", async () => {
  const background = backgroundClientOf(client);
  expect(
    await orderOf([["view", undefined, background], ["view live", "live", background], ["live"]]),
  ).toEqual(["view live", "live", "view"]);
  // One budget, one server state: what either learns, the other reads.
  expect(background.budget).toBe(client.budget);
  client.featureLevel = 400;
  expect(background.featureLevel).toBe(400);
});

it("a live call's expected wait counts the calls that start before it, not the background ones it passes", async () => {
  await send("spent");
  const sent = [send("bg 1", "background"), send("bg 2", "background"), send("bg 3", "background")];
  await flushAsync();
  const bucket = client.budget.other;
  const now = clock.now();
  // The minute spent: a live call starts at the next minute, ahead of the three background ones.
  expect(bucket.nextStartAt(now) - now).toBe(60_000);
  expect(bucket.snapshot(now).waitMs).toBe(60_000);
  expect(bucket.nextStartAt(now, "background") - now).toBe(4 * 60_000);
  for (let made = 1; made <= 3; made++) {
    await clock.tick(60_000);
    await expect.poll(() => botSaid(sandbox, BOT).length).toBe(made + 1);
  }
  await Promise.all(sent);
});

it("a background call's expected wait counts the live calls that start before it, not every live one", async () => {
  await send("spent");
  const sent = Array.from({ length: 7 }, (_, i) => send(`live ${i + 1}`));
  await flushAsync();
  const bucket = client.budget.other;
  const now = clock.now();
  // Three live calls start, then a background one asking now: the fourth minute, not the eighth.
  expect(bucket.nextStartAt(now, "background") - now).toBe(4 * 60_000);
  expect(bucket.nextStartAt(now) - now).toBe(8 * 60_000);
  for (let made = 1; made <= 7; made++) {
    await clock.tick(60_000);
    await expect.poll(() => botSaid(sandbox, BOT).length).toBe(made + 1);
  }
  await Promise.all(sent);
});

it("the wait a watcher estimates when a call begins waiting is that call's own", async () => {
  await send("spent");
  await clock.tick(10_000);
  // As an inbound webhook's handler does, to refuse a request whose call would wait too long.
  const watched = new AbortController().signal;
  const told: (number | "ended")[] = [];
  watchBudgetWaits(watched, {
    began: () => told.push(client.budget.other.nextStartAt() - clock.now()),
    ended: () => told.push("ended"),
  });
  const sent = client.messages.send(
    { type: "channel", to: "general", topic: "t", content: "watched" },
    { signal: watched },
  );
  await flushAsync();
  // It starts when the minute of the spent call is over, 50 s from now, not a call later.
  expect(told).toEqual([50_000]);
  await clock.tick(50_000);
  await sent;
  expect(told).toEqual([50_000, "ended"]);
  expect(botSaid(sandbox, BOT)).toEqual(["spent", "watched"]);
});
