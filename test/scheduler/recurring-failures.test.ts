import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import type { BotApi, RecurringAnnouncement } from "../../src/bot/bot-api.ts";
import { BOT, createWorld, iso, MEMBER, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const standup: RecurringAnnouncement = {
  cron: "0 9 * * *",
  timezone: "Europe/Berlin",
  to: "general",
  topic: "standup",
  content: "Standup time!",
};
const declare =
  (a: RecurringAnnouncement = standup) =>
  (bot: BotApi) =>
    void bot.recurring("standup", a);
const rows = () =>
  world.pending().map((s) => ({ at: iso(s.scheduled_delivery_timestamp), failed: s.failed }));
const logged = (msg: string) => world.logs.filter((l) => l.msg === msg);

describe("failed bookings (the server gives up when more than 10 minutes late)", () => {
  it("a small delay: moved to the next minute once, sent late, and the next occurrence booked", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runtime = await world.start(declare());
    await world.advanceTo("2026-03-02T08:11:00Z"); // the server's first look: 11 minutes late → failed
    await expect.poll(rows).toEqual([{ at: "2026-03-02T08:12:00.000Z", failed: false }]);
    await expect
      .poll(() =>
        logged("the server did not send the announcement; rescheduled it to go out in a minute (once)"),
      )
      .toMatchObject([
        { level: 40, announcement: "standup", occurrence: "2026-03-02T08:00:00.000Z", lateMinutes: 11 },
      ]);
    await world.advanceTo("2026-03-02T08:12:00Z");
    await expect.poll(rows).toEqual([{ at: "2026-03-03T08:00:00.000Z", failed: false }]);
    expect(world.sent().map((m) => [m.content, iso(m.timestamp)])).toEqual([
      ["Standup time!", "2026-03-02T08:12:00.000Z"],
    ]);
    await expect
      .poll(() => runtime.scheduler.stats)
      .toMatchObject({ failed: 1, rescheduled: 1, delivered: 1, booked: 2 });
  });

  it("moved to the next minute: the status's next run is the minute it goes out, not its past occurrence", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    await world.advanceTo("2026-03-02T08:11:00Z");
    await expect.poll(rows).toEqual([{ at: "2026-03-02T08:12:00.000Z", failed: false }]);
    const status = await world.withDaemon((d) => d.status());
    expect(status.bots[0]?.nextRuns).toEqual([{ name: "standup", at: "2026-03-02T08:12:00.000Z" }]);
  });

  it("failing again after the reschedule: dropped, nothing sent, the next occurrence booked", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runtime = await world.start(declare());
    await world.advanceTo("2026-03-02T08:11:00Z");
    await expect.poll(rows).toEqual([{ at: "2026-03-02T08:12:00.000Z", failed: false }]);
    await world.advanceTo("2026-03-02T08:23:00Z");
    await expect.poll(rows).toEqual([{ at: "2026-03-03T08:00:00.000Z", failed: false }]);
    expect(world.sent()).toEqual([]);
    await expect
      .poll(() => runtime.scheduler.stats)
      .toMatchObject({ failed: 2, rescheduled: 1, delivered: 0 });
    await expect
      .poll(() =>
        logged(
          "the announcement failed again after a reschedule; dropped it and booking the next occurrence",
        ),
      )
      .toHaveLength(1);
  });

  it("found failed at start within 30 minutes: rescheduled; found failed hours late: dropped", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    await world.stop();
    await world.advanceTo("2026-03-02T08:15:00Z");
    expect(rows()).toEqual([{ at: "2026-03-02T08:00:00.000Z", failed: true }]);
    let runtime = await world.start(declare());
    expect(rows()).toEqual([{ at: "2026-03-02T08:16:00.000Z", failed: false }]);
    expect(runtime.scheduler.stats).toMatchObject({ failed: 1, rescheduled: 1 });
    await world.stop();
    await world.advanceTo("2026-03-02T10:00:00Z");
    expect(rows()).toEqual([{ at: "2026-03-02T08:16:00.000Z", failed: true }]);
    runtime = await world.start(declare());
    expect(rows()).toEqual([{ at: "2026-03-03T08:00:00.000Z", failed: false }]);
    expect(world.sent()).toEqual([]);
    expect(runtime.scheduler.stats).toMatchObject({ failed: 1, rescheduled: 0, booked: 1 });
    expect(
      logged("the announcement failed again after a reschedule; dropped it and booking the next occurrence"),
    ).toMatchObject([{ level: 50, lateMinutes: 120 }]);
  });

  it("found failed at start with its content edited: moved once, and sent with the new content", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    await world.stop();
    await world.advanceTo("2026-03-02T08:15:00Z");
    expect(rows()).toEqual([{ at: "2026-03-02T08:00:00.000Z", failed: true }]);
    await world.start(declare({ ...standup, content: "Standup in room B!" }));
    expect(world.pending()).toMatchObject([
      {
        scheduled_delivery_timestamp: Date.parse("2026-03-02T08:16:00Z") / 1000,
        content: "Standup in room B!",
      },
    ]);
    await world.advanceTo("2026-03-02T08:16:00Z");
    await expect.poll(rows).toEqual([{ at: "2026-03-03T08:00:00.000Z", failed: false }]);
    expect(world.sent().map((m) => [m.content, iso(m.timestamp)])).toEqual([
      ["Standup in room B!", "2026-03-02T08:16:00.000Z"],
    ]);
  });

  it("hours late on the first failure: dropped without a retry", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    await world.stop();
    await world.advanceTo("2026-03-02T10:00:00Z");
    const runtime = await world.start(declare());
    expect(rows()).toEqual([{ at: "2026-03-03T08:00:00.000Z", failed: false }]);
    expect(runtime.scheduler.stats).toMatchObject({ failed: 1, rescheduled: 0 });
    expect(
      logged("the announcement failed and is too late to send; dropped it and booking the next occurrence"),
    ).toMatchObject([{ level: 50, announcement: "standup", lateMinutes: 120 }]);
  });
});

describe("crashes and booking errors", () => {
  it("a crash after the POST but before the id was written: the intent record finds the booking", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    const [booking] = world.pending();
    await world.stop();
    await world.withState(async (store) => {
      const bookings = store.namespace("herald").namespace("bookings");
      const { scheduledMessageId: _dropped, ...intent } = (await bookings.get("standup")) as Record<
        string,
        unknown
      >;
      await bookings.set("standup", intent as never);
    });
    const runtime = await world.start(declare());
    expect(world.pending().map((s) => s.scheduled_message_id)).toEqual([booking!.scheduled_message_id]);
    expect(runtime.scheduler.stats).toMatchObject({ adopted: 1, booked: 0 });
    expect(runtime.scheduler.bookings.get("standup")?.scheduledMessageId).toBe(booking!.scheduled_message_id);
  });

  it("the same crash, then a cron edit: the orphan the intent describes is deleted, the new time booked", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(declare());
    await world.stop();
    await world.withState(async (store) => {
      const bookings = store.namespace("herald").namespace("bookings");
      const { scheduledMessageId: _dropped, ...intent } = (await bookings.get("standup")) as Record<
        string,
        unknown
      >;
      await bookings.set("standup", intent as never);
    });
    const runtime = await world.start(declare({ ...standup, cron: "0 10 * * *" }));
    expect(rows()).toEqual([{ at: "2026-03-02T09:00:00.000Z", failed: false }]);
    expect(runtime.scheduler.stats).toMatchObject({ adopted: 1, replaced: 1, booked: 1 });
  });

  it("an unknown channel: the bot starts, the mistake is said at warn without a stack, and booking is tried again 30 minutes on", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runtime = await world.start(declare({ ...standup, to: "town-hall" }));
    expect(world.pending()).toEqual([]);
    expect(runtime.scheduler.stats.bookingErrors).toBe(1);
    const reason =
      'announcement "standup": "to" names no channel this bot can see: "town-hall". Check the spelling, that the channel exists and the bot can see it, or pass its id.';
    const said = logged(
      'announcement "standup" cannot be booked: "to" names no channel this bot can see: "town-hall". Check the spelling, that the channel exists and the bot can see it, or pass its id. Tried again every 30 minutes, and at each start.',
    );
    expect(said).toEqual([
      expect.objectContaining({ level: 40, announcement: "standup", code: "SCHEDULE_INVALID", reason }),
    ]);
    expect(said[0]).not.toHaveProperty("err");
    await world.botClient().channels.subscribe({ subscriptions: [{ name: "town-hall" }] });
    await world.advanceTo("2026-03-02T07:29:00Z");
    expect(rows()).toEqual([]);
    await world.advanceTo("2026-03-02T07:30:00Z"); // the retry comes 30 minutes later
    await expect.poll(rows).toEqual([{ at: "2026-03-02T08:00:00.000Z", failed: false }]);
    expect(world.sandbox.control.users().some((u) => u.email === MEMBER)).toBe(true);
  });
  it("refused by the server when the next is booked after a delivery's failure: the warning names the announcement", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.botClient().channels.subscribe({ subscriptions: [{ name: "secret" }], invite_only: true });
    await world.start(declare({ ...standup, to: "secret" }));
    expect(rows()).toEqual([{ at: "2026-03-02T08:00:00.000Z", failed: false }]);
    // The bot leaves its private channel: the server can no longer send there, nor book there.
    const auth = Buffer.from(`${BOT}:${world.sandbox.control.apiKeyOf(BOT)}`).toString("base64");
    const left = await request(`${world.sandbox.url}/api/v1/users/me/subscriptions`, {
      method: "DELETE",
      headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
      body: `subscriptions=${encodeURIComponent('["secret"]')}`,
    });
    expect(left.statusCode).toBe(200);
    await left.body.dump();
    await world.advanceTo("2026-03-02T08:00:00Z"); // failed, moved a minute on
    await expect.poll(rows).toEqual([{ at: "2026-03-02T08:01:00.000Z", failed: false }]);
    await world.advanceTo("2026-03-02T08:01:00Z"); // failed again: dropped, the next refused
    const said = () => world.logs.filter((l) => String(l.msg).includes("cannot be booked"));
    await expect.poll(said).toHaveLength(1);
    expect(said()[0]).toMatchObject({ level: 40, announcement: "standup", code: "STREAM_DOES_NOT_EXIST" });
    expect(said()[0]!.msg).toMatch(/^announcement "standup" cannot be booked: /);
    expect(rows()).toEqual([]);
  });
});
