import { afterEach, describe, expect, it } from "vitest";
import type { BotApi, RecurringAnnouncement } from "../../src/bot/bot-api.ts";
import { createWorld, iso, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

/** Daily at 09:00 Berlin time (08:00 UTC in winter) to #general › standup. */
const standup: RecurringAnnouncement = {
  cron: "0 9 * * *",
  timezone: "Europe/Berlin",
  to: "general",
  topic: "standup",
  content: "Standup time!",
};
const declare =
  (a: RecurringAnnouncement = standup, id = "standup") =>
  (bot: BotApi) =>
    void bot.recurring(id, a);

const times = () => world.pending().map((s) => iso(s.scheduled_delivery_timestamp));

describe("recurring announcements booked on the server", () => {
  it("books the next occurrence, which the server sends on time, then books the one after", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runtime = await world.start(declare());
    expect(world.pending()).toMatchObject([
      {
        type: "stream",
        topic: "standup",
        content: "Standup time!",
        scheduled_delivery_timestamp: Date.parse("2026-03-02T08:00:00Z") / 1000,
      },
    ]);
    expect(runtime.scheduler.bookings.get("standup")).toMatchObject({
      occurrence: "2026-03-02T08:00:00.000Z",
      key: "standup@2026-03-02T08:00:00.000Z",
      scheduledMessageId: world.pending()[0]!.scheduled_message_id,
    });
    await world.advanceTo("2026-03-02T08:00:00Z");
    await expect.poll(times).toEqual(["2026-03-03T08:00:00.000Z"]);
    expect(world.sent()).toMatchObject([
      { content: "Standup time!", topic: "standup", timestamp: Date.parse("2026-03-02T08:00:00Z") / 1000 },
    ]);
    await expect
      .poll(() => runtime.scheduler.stats)
      .toMatchObject({ booked: 2, delivered: 1, adopted: 0, failed: 0 });
  });

  it("restarting three times leaves exactly the one booking (same id, nothing re-posted)", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    const [first] = world.pending();
    for (let i = 0; i < 3; i++) {
      const runtime = await world.start(declare());
      expect(world.pending().map((s) => s.scheduled_message_id)).toEqual([first!.scheduled_message_id]);
      expect(runtime.scheduler.stats).toMatchObject({ booked: 0, adopted: 0, replaced: 0 });
    }
    const posts = world.sandbox.control.requests.filter(
      (r) => r.method === "POST" && r.path === "/scheduled_messages",
    );
    expect(posts).toHaveLength(1);
  });

  it("a delivery during downtime is the server's: the restart books the next one, no duplicate", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    await world.stop();
    // Three days down: the server sends the one booked occurrence; the two after were never booked.
    await world.advanceTo("2026-03-02T08:00:00Z");
    await world.advanceTo("2026-03-05T07:30:00Z");
    expect(world.sent().map((m) => iso(m.timestamp))).toEqual(["2026-03-02T08:00:00.000Z"]);
    const runtime = await world.start(declare());
    expect(times()).toEqual(["2026-03-05T08:00:00.000Z"]);
    expect(runtime.scheduler.stats).toMatchObject({ booked: 1, delivered: 1 });
    await world.advanceTo("2026-03-05T08:00:00Z");
    await expect.poll(times).toEqual(["2026-03-06T08:00:00.000Z"]);
    expect(world.sent().map((m) => iso(m.timestamp))).toEqual([
      "2026-03-02T08:00:00.000Z",
      "2026-03-05T08:00:00.000Z",
    ]);
  });

  it("an edited cron replaces the booking; edited content updates it in place", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    const [old] = world.pending();
    let runtime = await world.start(declare({ ...standup, cron: "30 9 * * *" }));
    expect(times()).toEqual(["2026-03-02T08:30:00.000Z"]);
    expect(world.pending()[0]!.scheduled_message_id).not.toBe(old!.scheduled_message_id);
    expect(runtime.scheduler.stats).toMatchObject({ replaced: 1, booked: 1 });
    const [current] = world.pending();
    runtime = await world.start(
      declare({ ...standup, cron: "30 9 * * *", content: "Standup in the big room!" }),
    );
    expect(world.pending()).toMatchObject([
      { scheduled_message_id: current!.scheduled_message_id, content: "Standup in the big room!" },
    ]);
    expect(runtime.scheduler.stats).toMatchObject({ replaced: 0, booked: 0 });
  });

  it("a booking made before a crash (POST done, state not written) is adopted, not duplicated", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const { scheduled_message_id } = await world.botClient().scheduledMessages.create({
      type: "channel",
      to: 1,
      topic: "standup",
      content: "Standup time!\n",
      scheduled_delivery_timestamp: Date.parse("2026-03-02T08:00:00Z") / 1000,
    });
    const runtime = await world.start(declare());
    expect(world.pending().map((s) => s.scheduled_message_id)).toEqual([scheduled_message_id]);
    expect(runtime.scheduler.stats).toMatchObject({ adopted: 1, booked: 0 });
    expect(world.logs.find((l) => l.msg === "adopted the booking found on the server")).toMatchObject({
      announcement: "standup",
      occurrence: "2026-03-02T08:00:00.000Z",
      scheduledMessageId: scheduled_message_id,
    });
  });

  it("daily 09:00 in Berlin across the spring DST change: 08:00 UTC, then 07:00 UTC", async () => {
    world = await createWorld("2026-03-27T09:00:00Z");
    await world.start(declare());
    expect(times()).toEqual(["2026-03-28T08:00:00.000Z"]);
    await world.advanceTo("2026-03-28T08:00:00Z");
    await expect.poll(times).toEqual(["2026-03-29T07:00:00.000Z"]);
    await world.advanceTo("2026-03-29T07:00:00Z");
    await expect.poll(times).toEqual(["2026-03-30T07:00:00.000Z"]);
    expect(world.sent().map((m) => iso(m.timestamp))).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
    ]);
  });

  it("an announcement no longer declared has its booking cancelled at start", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start((bot) => {
      bot.recurring("standup", standup);
      bot.recurring("retro", { ...standup, cron: "0 16 * * 5", topic: "retro", content: "Retro!" });
    });
    expect(world.pending().map((s) => s.topic)).toEqual(["standup", "retro"]);
    await world.start(declare());
    expect(world.pending().map((s) => s.topic)).toEqual(["standup"]);
    expect(
      world.logs.some(
        (l) =>
          l.msg === "announcement no longer declared; its booking was cancelled" &&
          l.announcement === "retro",
      ),
    ).toBe(true);
  });

  it("an announcement renamed (same schedule, new id) books the next occurrence, not the one after", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    const [old] = world.pending();
    // The old id's booking is deleted at the start; the new id must not adopt it from the list
    // read before that deletion, or the server's remove event skips today's occurrence.
    const runtime = await world.start(declare(standup, "daily-standup"));
    await runtime.scheduler.idle();
    await expect.poll(times).toEqual(["2026-03-02T08:00:00.000Z"]);
    expect(world.pending()[0]!.scheduled_message_id).not.toBe(old!.scheduled_message_id);
    await runtime.scheduler.idle();
    expect(runtime.scheduler.stats).toMatchObject({ cancelled: 0, booked: 1 });
    expect(runtime.scheduler.bookings.get("daily-standup")).toMatchObject({
      occurrence: "2026-03-02T08:00:00.000Z",
      scheduledMessageId: world.pending()[0]!.scheduled_message_id,
    });
  });

  it("a booking cancelled before its time skips that occurrence and books the next", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runtime = await world.start((bot) => {
      bot.recurring("standup", standup);
    });
    await runtime.scheduler.schedule.cancel(world.pending()[0]!.scheduled_message_id);
    await expect.poll(times).toEqual(["2026-03-03T08:00:00.000Z"]);
    await expect.poll(() => runtime.scheduler.stats).toMatchObject({ cancelled: 1, delivered: 0 });
  });

  it("direct-message announcements resolve emails to ids and stay one booking across restarts", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const dm = {
      ...standup,
      to: ["member@sandbox.example", "herald-bot@sandbox.example"],
      topic: undefined,
    } as RecurringAnnouncement;
    await world.start(declare(dm));
    await world.start(declare(dm));
    const memberId = world.sandbox.control.users().find((u) => u.email === "member@sandbox.example")!.user_id;
    expect(world.pending()).toMatchObject([{ type: "private", to: [memberId] }]);
    expect(world.pending()).toHaveLength(1);
  });
});
