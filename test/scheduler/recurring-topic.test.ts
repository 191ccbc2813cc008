/**
 * `bot.recurring` with a topic naming the occurrence's day, in its time zone: a template
 * (`"standup {{date}}"`) or a function, still booked on the server one occurrence at a time.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { BotApi, RecurringAnnouncement } from "../../src/bot/bot-api.ts";
import { recurringProblem } from "../../src/scheduler/check-declarations.ts";
import { createWorld, iso, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

/** Weekdays at 09:30 Berlin (08:30 UTC in winter) to #general › standup <date>. */
const standup: RecurringAnnouncement = {
  cron: "30 9 * * 1-5",
  timezone: "Europe/Berlin",
  to: "general",
  topic: "standup {{date}}",
  content: "Standup time!",
};
const declare =
  (a: RecurringAnnouncement = standup) =>
  (bot: BotApi) =>
    void bot.recurring("standup", a);
const booked = () => world.pending().map((s) => [iso(s.scheduled_delivery_timestamp), s.topic]);

describe("a dated topic", () => {
  it("names each occurrence's day in the topic it is booked under, Friday then Monday", async () => {
    world = await createWorld("2026-03-06T07:00:00Z"); // a Friday
    await world.start(declare());
    expect(booked()).toEqual([["2026-03-06T08:30:00.000Z", "standup 2026-03-06"]]);
    await world.advanceTo("2026-03-06T08:30:00Z");
    await expect.poll(booked).toEqual([["2026-03-09T08:30:00.000Z", "standup 2026-03-09"]]);
    expect(world.sent()).toMatchObject([{ topic: "standup 2026-03-06", content: "Standup time!" }]);
  });

  it("reads the day in the announcement's time zone, not in UTC", async () => {
    world = await createWorld("2026-03-06T12:00:00Z");
    // 00:30 in Tokyo is 15:30 UTC the day before.
    await world.start(
      declare({
        ...standup,
        cron: "30 0 * * *",
        timezone: "Asia/Tokyo",
        topic: "{{weekday}} {{date}} {{time}}",
      }),
    );
    expect(booked()).toEqual([["2026-03-06T15:30:00.000Z", "Saturday 2026-03-07 00:30"]]);
  });

  it("takes a function of the occurrence; restarts adopt the booking, a new topic updates it in place", async () => {
    world = await createWorld("2026-03-06T07:00:00Z");
    const named = (prefix: string): RecurringAnnouncement => ({
      ...standup,
      topic: (at, local) => `${prefix} ${local.weekday} ${at.getUTCHours()}h`,
    });
    await world.start(declare(named("sync")));
    const [first] = world.pending();
    expect(first).toMatchObject({ topic: "sync Friday 8h" });
    const again = await world.start(declare(named("sync")));
    expect(again.scheduler.stats).toMatchObject({ booked: 0, replaced: 0 });
    await world.start(declare(named("daily")));
    expect(world.pending()).toMatchObject([
      { scheduled_message_id: first!.scheduled_message_id, topic: "daily Friday 8h" },
    ]);
    const posts = world.sandbox.control.requests.filter(
      (r) => r.method === "POST" && r.path === "/scheduled_messages",
    );
    expect(posts).toHaveLength(1);
  });
});

describe("a topic function longer than the server allows", () => {
  it("refuses that occurrence, naming the announcement, and books nothing for it (the server would cut it short)", async () => {
    world = await createWorld("2026-03-06T07:00:00Z"); // a Friday
    // Friday's topic fits; Monday's is 71 characters (the sandbox, like the server, allows 60).
    const topic: RecurringAnnouncement["topic"] = (_at, local) =>
      local.weekday === "Friday" ? `standup ${local.date}` : `standup ${"x".repeat(52)} ${local.weekday}`;
    await world.start((bot) => {
      bot.recurring("standup", { ...standup, topic });
      bot.recurring("rules", { ...standup, cron: "0 12 * * *", topic: "rules", content: "Be kind." });
    });
    expect(booked()).toEqual([
      ["2026-03-06T08:30:00.000Z", "standup 2026-03-06"],
      ["2026-03-06T11:00:00.000Z", "rules"],
    ]);

    await world.advanceTo("2026-03-06T08:30:00Z");
    await expect.poll(() => world.sent().length).toBe(1);
    // Booking Monday after the delivery fails: a mistake of the config, said once at warn, no stack.
    const refused = () => world.logs.find((l) => l.code === "SCHEDULE_INVALID" && l.level === 40);
    await expect.poll(refused).toMatchObject({
      announcement: "standup",
      msg: 'announcement "standup" cannot be booked: its topic for 2026-03-09T08:30:00.000Z is 67 characters; the server allows 60 (it would cut it short). Shorten it. Tried again every 30 minutes, and at each start.',
    });
    expect(refused()).not.toHaveProperty("err");
    await world.advanceTo("2026-03-06T08:32:00Z");
    expect(booked()).toEqual([["2026-03-06T11:00:00.000Z", "rules"]]);
    const posts = world.sandbox.control.requests.filter(
      (r) => r.method === "POST" && r.path === "/scheduled_messages",
    );
    expect(posts).toHaveLength(2);
  });
});

describe("declaring a dated topic", () => {
  const problem = (topic: RecurringAnnouncement["topic"]) =>
    recurringProblem("standup", { ...standup, topic });

  it("refuses a single-brace placeholder, an unknown one and one that renders too long", () => {
    expect(problem("standup {date}")).toBe(
      'bot.recurring("standup").topic: uses {date}, the old placeholder spelling: write {{date}}.',
    );
    expect(problem("standup {{day}}")).toBe(
      'bot.recurring("standup").topic: uses {{day}}; the placeholders are {{date}}, {{weekday}}, {{time}}.',
    );
    expect(problem(`${"x".repeat(45)} {{weekday}} {{date}}`)).toBe(
      'bot.recurring("standup").topic is up to 66 characters; topics are at most 60.',
    );
    expect(problem("team {sync} {{date}}")).toBeUndefined();
    expect(problem(() => "standup")).toBeUndefined();
  });
});
