/**
 * The shipped announcements bot (bots/announcements.ts) at the edges of its retries: booking the
 * next occurrence fails after a delivery or a drop, and each occurrence is still logged once for
 * what happened to it; a reschedule lands on the server without its record (its answer lost, the
 * store refusing the write), and the occurrence is still moved at most once. It imports "bothost", which resolves to dist/: run `npm run build` first
 * (`npm test` does).
 */
import { afterEach, describe, expect, it } from "vitest";
import { definition, rules, settings } from "../support/announcements-bot.ts";
import { StoreGate } from "../support/gated-store.ts";
import { createWorld, iso, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const standup = {
  id: "standup",
  cron: "0 9 * * *",
  timezone: "Europe/Berlin",
  channel: "general",
  topic: "standup",
  content: "Standup time!",
};
const rows = () =>
  world.pending().map((s) => ({ at: iso(s.scheduled_delivery_timestamp), failed: s.failed }));
/** What the bot posted in channels (the Notification Bot's failure notes to it get a DM answer). */
const posted = () => world.sent().filter((m) => m.stream_id !== null);
const lines = (msg: string) =>
  world.logs.filter((l) => l.msg === msg).map((l) => `${l.announcement} ${l.occurrence}`);
const DELIVERED = "announcement delivered";
const RESCHEDULED = "the server did not send the announcement; rescheduled it to go out in a minute (once)";
const MOVED =
  "the booking was moved on the server (a reschedule not recorded before a failure or crash); recorded its new time";
const FAILED_AGAIN =
  "the announcement failed again after a reschedule; dropped it and booking the next occurrence";

/**
 * Lines that say booking the next occurrence failed (the event's step, or a reconcile's): the
 * snippet missing, a mistake of the config, said at warn once and at debug on each retry.
 */
const bookingFailures = () => world.logs.filter((l) => / cannot be booked: /.test(String(l.msg))).length;

/** A world on Monday 2026-03-02 at 14:55 UTC with the bot's "House rules" snippet; its id. */
async function withSnippet(): Promise<number> {
  world = await createWorld("2026-03-02T14:55:00Z");
  const { saved_snippet_id } = await world
    .botClient()
    .savedSnippets.create({ title: "House rules", content: "Be kind." });
  return saved_snippet_id;
}

const restoreSnippet = () =>
  world.botClient().savedSnippets.create({ title: "House rules", content: "Be kind, always." });
/** The Monday after (New York is on summer time by then). */
const NEXT_WEEK = [{ at: "2026-03-09T14:00:00.000Z", failed: false }];

describe("booking the next occurrence fails after the previous one is over", () => {
  it("after a delivery: the retries book it, and the delivery is logged once", async () => {
    const snippet = await withSnippet();
    const runtime = await world.start(definition, settings([rules]));
    expect(rows()).toEqual([{ at: "2026-03-02T15:00:00.000Z", failed: false }]);
    // The snippet goes: the next occurrence, whose text it is, cannot be booked.
    await world.botClient().savedSnippets.delete(snippet);
    await world.advanceTo("2026-03-02T15:00:00Z");
    await expect.poll(() => posted()).toHaveLength(1);
    await expect.poll(bookingFailures).toBe(1);
    // The check 12 minutes after the occurrence, and the retry 30 minutes on, fail the same way.
    await world.advanceTo("2026-03-02T15:30:00Z");
    await expect.poll(bookingFailures).toBe(3);
    await restoreSnippet();
    runtime.scheduler.resync();
    await expect.poll(rows).toEqual(NEXT_WEEK);
    // Counted once the POST's answer is read, a moment after the server has the booking.
    await expect.poll(() => runtime.scheduler.stats).toMatchObject({ delivered: 1, booked: 2 });
    expect(lines(DELIVERED)).toEqual(["rules 2026-03-02T15:00:00.000Z"]);
  });

  it("after a delivery, then a restart: the delivery is not logged again", async () => {
    const snippet = await withSnippet();
    await world.start(definition, settings([rules]));
    await world.botClient().savedSnippets.delete(snippet);
    await world.advanceTo("2026-03-02T15:00:00Z");
    await expect.poll(bookingFailures).toBe(1);
    await world.stop();
    await restoreSnippet();
    const runtime = await world.start(definition, settings([rules]));
    expect(rows()).toEqual(NEXT_WEEK);
    expect(lines(DELIVERED)).toEqual(["rules 2026-03-02T15:00:00.000Z"]);
    expect(runtime.scheduler.stats).toMatchObject({ delivered: 0, booked: 1 });
  });

  it("after a drop (failed again): never logged as delivered, the drop logged once", async () => {
    const snippet = await withSnippet();
    const runtime = await world.start(definition, settings([rules]));
    await world.advanceTo("2026-03-02T15:11:00Z"); // the server's first look: 11 minutes late
    await expect.poll(rows).toEqual([{ at: "2026-03-02T15:12:00.000Z", failed: false }]);
    await world.botClient().savedSnippets.delete(snippet);
    await world.advanceTo("2026-03-02T15:23:00Z"); // failed again: dropped, the next one unbookable
    await expect.poll(() => lines(FAILED_AGAIN)).toHaveLength(1);
    await expect.poll(rows).toEqual([]);
    const failures = bookingFailures();
    await world.advanceTo("2026-03-02T15:53:00Z"); // the retry, 30 minutes on, fails the same way
    await expect.poll(bookingFailures).toBeGreaterThan(failures);
    await restoreSnippet();
    runtime.scheduler.resync();
    await expect.poll(rows).toEqual(NEXT_WEEK);
    expect(posted()).toEqual([]);
    expect(lines(DELIVERED)).toEqual([]);
    expect(lines(FAILED_AGAIN)).toEqual(["rules 2026-03-02T15:00:00.000Z"]);
    expect(runtime.scheduler.stats).toMatchObject({ delivered: 0, failed: 2, rescheduled: 1 });
  });
});

describe("a reschedule that landed on the server without its record", () => {
  it("its answer lost: recorded at the next reconcile; failing again drops it, never moved twice", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runtime = await world.start(definition, settings([standup]));
    // The server makes the PATCH; the answer is lost on the way back (a proxy's 502).
    world.sandbox.control.failNext(1, {
      status: 502,
      nonJson: true,
      after: true,
      paths: [/^\/scheduled_messages\/\d+$/],
      methods: ["PATCH"],
    });
    await world.advanceTo("2026-03-02T08:11:00Z");
    await expect.poll(rows).toEqual([{ at: "2026-03-02T08:12:00.000Z", failed: false }]);
    await expect
      .poll(() => world.logs.filter((l) => l.msg === "scheduler step failed; retrying"))
      .toHaveLength(1);
    // The retry's reconcile (08:12) sees the booking moved; the server then fails it again.
    await world.advanceTo("2026-03-02T08:23:00Z");
    await expect.poll(rows).toEqual([{ at: "2026-03-03T08:00:00.000Z", failed: false }]);
    expect(posted()).toEqual([]);
    expect(lines(FAILED_AGAIN)).toEqual(["standup 2026-03-02T08:00:00.000Z"]);
    expect(lines(RESCHEDULED)).toEqual([]);
    expect(lines(MOVED)).toEqual(["standup 2026-03-02T08:00:00.000Z"]);
    expect(runtime.scheduler.stats).toMatchObject({ rescheduled: 0, failed: 2, delivered: 0 });
  });

  it("its record refused by the store: the next reconcile writes it", async () => {
    const gate = new StoreGate();
    world = await createWorld("2026-03-02T07:00:00Z", { gate });
    const runtime = await world.start(definition, settings([standup]));
    gate.mode = "fail";
    await world.advanceTo("2026-03-02T08:11:00Z");
    await gate.stoppedAt(1);
    await expect.poll(rows).toEqual([{ at: "2026-03-02T08:12:00.000Z", failed: false }]);
    gate.open();
    runtime.scheduler.resync();
    await expect.poll(() => lines(MOVED)).toEqual(["standup 2026-03-02T08:00:00.000Z"]);
    await world.stop();
    expect(await readRecord()).toMatchObject({
      occurrence: "2026-03-02T08:00:00.000Z",
      retried: true,
      target: { timestamp: Date.parse("2026-03-02T08:12:00Z") / 1000 },
    });
  });

  it("its record refused by the store, then a restart once it failed again: dropped, not moved again", async () => {
    const gate = new StoreGate();
    world = await createWorld("2026-03-02T07:00:00Z", { gate });
    await world.start(definition, settings([standup]));
    gate.mode = "fail";
    await world.advanceTo("2026-03-02T08:11:00Z");
    await gate.stoppedAt(1);
    await expect.poll(rows).toEqual([{ at: "2026-03-02T08:12:00.000Z", failed: false }]);
    await world.stop();
    gate.open();
    await world.advanceTo("2026-03-02T08:23:00Z"); // down meanwhile: the server failed it again
    expect(rows()).toEqual([{ at: "2026-03-02T08:12:00.000Z", failed: true }]);
    const runtime = await world.start(definition, settings([standup]));
    expect(rows()).toEqual([{ at: "2026-03-03T08:00:00.000Z", failed: false }]);
    expect(posted()).toEqual([]);
    expect(lines(FAILED_AGAIN)).toEqual(["standup 2026-03-02T08:00:00.000Z"]);
    expect(runtime.scheduler.stats).toMatchObject({ rescheduled: 0, failed: 1, booked: 1 });
  });
});

async function readRecord(): Promise<unknown> {
  let value: unknown;
  await world.withState(async (store) => {
    value = await store.namespace("herald").namespace("bookings").get("standup");
  });
  return value;
}
