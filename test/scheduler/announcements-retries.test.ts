/**
 * The shipped announcements bot (bots/announcements.ts) at the edges of its retries: booking the
 * next occurrence fails after a delivery or a drop, and each occurrence is still logged once for
 * what happened to it. It imports "bothost", which resolves to dist/: run `npm run build` first
 * (`npm test` does).
 */
import { afterEach, describe, expect, it } from "vitest";
import { definition, rules, settings } from "../support/announcements-bot.ts";
import { createWorld, iso, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const rows = () =>
  world.pending().map((s) => ({ at: iso(s.scheduled_delivery_timestamp), failed: s.failed }));
/** What the bot posted in channels (the Notification Bot's failure notes to it get a DM answer). */
const posted = () => world.sent().filter((m) => m.stream_id !== null);
const lines = (msg: string) =>
  world.logs.filter((l) => l.msg === msg).map((l) => `${l.announcement} ${l.occurrence}`);
const DELIVERED = "announcement delivered";
const FAILED_AGAIN =
  "the announcement failed again after a reschedule; dropped it and booking the next occurrence";

/** Lines that say booking the next occurrence failed (the event's step, or a reconcile's). */
const bookingFailures = () =>
  world.logs.filter(
    (l) =>
      l.msg === "scheduler step failed; retrying" ||
      l.msg === 'announcement "rules" could not be booked; retrying',
  ).length;

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
    await world.advanceTo("2026-03-02T15:01:00Z"); // the first retry fails the same way
    await expect.poll(bookingFailures).toBe(2);
    await restoreSnippet();
    runtime.scheduler.resync();
    await expect.poll(rows).toEqual(NEXT_WEEK);
    expect(lines(DELIVERED)).toEqual(["rules 2026-03-02T15:00:00.000Z"]);
    expect(runtime.scheduler.stats).toMatchObject({ delivered: 1, booked: 2 });
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
    await world.advanceTo("2026-03-02T15:40:00Z"); // retries fail the same way
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
