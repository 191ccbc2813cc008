/**
 * The deadlines of waiting dialogs: one timer for all of them, however many wait (a timer each
 * cost about 600 bytes a dialog), and each dialog still reported once, at its own deadline, in
 * deadline order; an answered or paused dialog is not.
 */
import { expect, it } from "vitest";
import type { Dialogs } from "../../src/pipeline/dialogs/dialogs.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { asked, memoryDialogs, waitAt } from "../support/memory-dialogs.ts";

const T0 = 1_000_000;
const DIALOGS = 1_000;

/** Dialog `i` waits in its own topic, its deadline `i + 1` seconds after T0. */
const wait = (dialogs: Dialogs, i: number, startedAt = T0) =>
  waitAt(dialogs, {
    id: 100 + i,
    conversation: `channel:4:t${i}`,
    at: T0,
    deadline: T0 + (i + 1) * 1000,
    startedAt,
  });
/** A message sent at T0 (before every deadline). */
const msg = (id: number) => ({ id, timestamp: T0 / 1000 });

async function parked(clock: ManualClock) {
  const dialogs = memoryDialogs(clock);
  const due: string[] = [];
  dialogs.arm({ due: (id) => due.push(id), ready: () => {}, kept: () => {} });
  // Parked out of deadline order.
  for (let i = DIALOGS - 1; i >= 0; i -= 2) await wait(dialogs, i);
  for (let i = DIALOGS - 2; i >= 0; i -= 2) await wait(dialogs, i);
  return { dialogs, due };
}

it("a thousand waiting dialogs hold one timer, and each deadline is reported once, in order", async () => {
  const clock = new ManualClock(T0);
  const { dialogs, due } = await parked(clock);
  expect(dialogs.size).toBe(DIALOGS);
  expect(clock.pendingTimers).toBe(1);

  // Answered dialogs are no longer due (the first one included: the timer then finds nothing).
  expect(dialogs.match("channel:4:t0", 7, msg(10_000))).toMatchObject({ entry: { id: "100" } });
  expect(dialogs.match("channel:4:t5", 7, msg(10_001))).toMatchObject({ entry: { id: "105" } });
  await clock.tickTo(T0 + 10_000);
  expect(due).toEqual(["101", "102", "103", "104", "106", "107", "108", "109"]);
  expect(clock.pendingTimers).toBe(1);
  expect(clock.nextDueAt()).toBe(T0 + 11_000);

  // A dialog parked again (its next question) waits for its new deadline, not the old one.
  await dialogs.append(dialogs.entry("110")!.head, [asked(1, 20_000, T0, T0 + 500_000)], false);
  await clock.tickTo(T0 + 12_000);
  expect(due.slice(8)).toEqual(["111"]);

  await clock.tickTo(T0 + DIALOGS * 1000);
  expect(due).toHaveLength(DIALOGS - 2);
  expect(new Set(due).size).toBe(due.length);
  expect(due.indexOf("110")).toBe(due.indexOf("599") + 1);
  expect(clock.pendingTimers).toBe(0);
});

it("a paused bot holds no timer; armed again, deadlines passed meanwhile are reported at once", async () => {
  const clock = new ManualClock(T0);
  const { dialogs, due } = await parked(clock);
  dialogs.pause();
  expect(clock.pendingTimers).toBe(0);
  await clock.tickTo(T0 + 3_000);
  expect(due).toEqual([]);

  dialogs.arm({ due: (id) => due.push(id), ready: () => {}, kept: () => {} });
  expect(clock.pendingTimers).toBe(1);
  await clock.tick(0);
  expect(due).toEqual(["100", "101", "102"]);
  dialogs.stop();
  expect(clock.pendingTimers).toBe(0);
});

it("a status's few oldest dialogs are the first of the whole list, picked without sorting all", async () => {
  const dialogs = memoryDialogs(new ManualClock(T0));
  // Started in a scrambled order, three at each instant (ties keep the order they were met in).
  for (let i = 0; i < DIALOGS; i++) await wait(dialogs, i, T0 + ((i * 7919) % (DIALOGS / 3 + 1)) * 1000);
  const all = dialogs.list();
  expect(all).toHaveLength(DIALOGS);
  const since = all.map((d) => Date.parse(d.since));
  expect(since).toEqual([...since].sort((a, b) => a - b));
  for (const limit of [0, 1, 10, 50, DIALOGS - 1]) expect(dialogs.list(limit)).toEqual(all.slice(0, limit));
  expect(dialogs.list(DIALOGS + 5)).toEqual(all);
});
