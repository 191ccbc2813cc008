/**
 * Announcement bookings recorded by versions that digested their content stripped as JavaScript's
 * `\s` sees whitespace (U+FEFF stripped, U+0085 kept), started with the current code, which strips
 * it as the server does. A booking whose id is recorded is found by its id: nothing is booked,
 * replaced or updated. A booking whose POST a crash cut before its id was written is found by its
 * recipient, time and digest: one whose content ends in U+FEFF is still recognised (the server
 * keeps that character, the earlier digest did not), so an edit or a removal made in the same
 * deploy applies to it instead of leaving it on the server beside a new booking. Unchanged, such a
 * booking is adopted as the next occurrence's even when its digest is not recognised (its content
 * ending in U+0085, which the server strips and those versions kept).
 */
import { afterEach, expect, it } from "vitest";
import type { BotApi, RecurringAnnouncement } from "../../src/bot/bot-api.ts";
import { digest } from "../../src/effects/schedule/normalize.ts";
import { createWorld, iso, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const standup = (content: string): RecurringAnnouncement => ({
  cron: "0 9 * * *",
  timezone: "Europe/Berlin",
  to: "general",
  topic: "standup",
  content,
});
const declare = (a: RecurringAnnouncement) => (bot: BotApi) => void bot.recurring("standup", a);
const nothing = () => {};

/** The content digest those versions wrote: trailing `\s` and leading newlines stripped. */
const earlierDigest = (content: string) => digest(content.replace(/\s+$/u, "").replace(/^\n+/, ""));

/**
 * `content` booked for 2026-03-02 08:00 UTC, its record then written as an earlier version writes
 * it (its content digest the earlier one; `crashed`: its id not written, a crash after the POST).
 */
async function bookedBefore(content: string, crashed: boolean) {
  world = await createWorld("2026-03-02T07:00:00Z");
  await world.start(declare(standup(content)));
  await world.stop();
  await world.withState(async (store) => {
    const bookings = store.namespace("herald").namespace("bookings");
    const { scheduledMessageId, ...rec } = (await bookings.get("standup")) as Record<string, unknown> & {
      target: Record<string, unknown>;
    };
    const target = { ...rec.target, contentHash: earlierDigest(content) };
    await bookings.set("standup", { ...rec, target, ...(!crashed && { scheduledMessageId }) } as never);
  });
  return world.pending();
}

const rows = () => world.pending().map((s) => [iso(s.scheduled_delivery_timestamp), s.content]);
const posts = () =>
  world.sandbox.control.requests.filter((r) => r.method === "POST" && r.path === "/scheduled_messages");

it.each([
  ["U+FEFF", "Standup time!\uFEFF"],
  ["U+0085", "Standup time!\u0085"],
])(
  "booked with its id, content ending in %s: the restart books, replaces and updates nothing",
  async (_, content) => {
    const [booking] = await bookedBefore(content, false);
    const runtime = await world.start(declare(standup(content)));
    expect(world.pending()).toEqual([booking]);
    expect(posts()).toHaveLength(1);
    expect(runtime.scheduler.stats).toMatchObject({ booked: 0, adopted: 0, replaced: 0 });
    expect(world.logs.filter((l) => l.msg === "content changed; updated the booking")).toEqual([]);
  },
);

it.each([
  ["U+FEFF", "Standup time!\uFEFF"],
  ["U+0085", "Standup time!\u0085"],
])("its POST cut by a crash, content ending in %s, unchanged: the restart adopts it", async (_, content) => {
  const [booking] = await bookedBefore(content, true);
  const runtime = await world.start(declare(standup(content)));
  expect(world.pending()).toEqual([booking]);
  expect(runtime.scheduler.stats).toMatchObject({ booked: 0, adopted: 1 });
  expect(runtime.scheduler.bookings.get("standup")?.scheduledMessageId).toBe(booking!.scheduled_message_id);
});

it("its POST cut by a crash, content ending in U+FEFF, edited in the same deploy: updated in place, not booked beside it", async () => {
  const [booking] = await bookedBefore("Standup time!\uFEFF", true);
  await world.start(declare(standup("Standup in room B!")));
  expect(rows()).toEqual([["2026-03-02T08:00:00.000Z", "Standup in room B!"]]);
  expect(world.pending()[0]!.scheduled_message_id).toBe(booking!.scheduled_message_id);
});

it("its POST cut by a crash, content ending in U+FEFF, its time edited in the same deploy: replaced, not booked beside it", async () => {
  await bookedBefore("Standup time!\uFEFF", true);
  await world.start(declare({ ...standup("Standup time!\uFEFF"), cron: "0 10 * * *" }));
  expect(rows()).toEqual([["2026-03-02T09:00:00.000Z", "Standup time!\uFEFF"]]);
});

it("its POST cut by a crash, content ending in U+FEFF, no longer declared: its booking is cancelled", async () => {
  await bookedBefore("Standup time!\uFEFF", true);
  await world.start(nothing);
  expect(world.pending()).toEqual([]);
});
