/**
 * Recurring announcements when the account's rate limit is spent by another client of the same
 * account (the server refuses the bot's calls with a wait, NOTES §6): one warn line
 * without a stack that says so, no error line, and the next occurrence booked once the wait is
 * over, not retried every minute meanwhile.
 */
import { afterEach, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { RATE_LIMITED } from "../../src/scheduler/booking-policy.ts";
import { createWorld, iso, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const declare = (bot: BotApi) =>
  void bot.recurring("standup", {
    cron: "0 9 * * *",
    timezone: "Europe/Berlin",
    to: "general",
    topic: "standup",
    content: "Standup time!",
  });
const rows = () =>
  world.pending().map((s) => ({ at: iso(s.scheduled_delivery_timestamp), failed: s.failed }));
const logged = (msg: string) => world.logs.filter((l) => l.msg === msg);

it("a rate limit spent elsewhere: one warn line without a stack, booked again after the server's wait", async () => {
  world = await createWorld("2026-03-02T07:00:00Z");
  await world.start(declare);
  await expect.poll(rows).toEqual([{ at: "2026-03-02T08:00:00.000Z", failed: false }]);
  await world.advanceTo("2026-03-02T07:59:30Z");
  // The account's hour spent by another client: the server refuses the bot's next calls, asking
  // to wait 50 minutes (the event poll's refusal, and the booking's after the delivery).
  world.sandbox.control.rateLimitNext(2, 3000);
  await world.advanceTo("2026-03-02T08:00:30Z"); // sent at 08:00; the next one must be booked
  await expect
    .poll(() => logged(RATE_LIMITED))
    .toMatchObject([{ level: 40, announcement: "standup", code: "RATE_LIMIT_HIT" }]);
  const [line] = logged(RATE_LIMITED);
  expect(line).not.toHaveProperty("err");
  expect(world.logs.filter((l) => Number(l.level) >= 50)).toEqual([]);
  const waitMs = Number(line!.retryAfterSeconds) * 1000;
  expect(waitMs).toBeGreaterThan(10 * 60_000);

  // Well within the wait, nothing is tried again (no second refusal).
  await world.advanceTo(new Date(Date.parse("2026-03-02T08:00:30Z") + waitMs / 2).toISOString());
  expect(rows()).toEqual([]);
  expect(logged(RATE_LIMITED)).toHaveLength(1);

  await world.advanceTo(new Date(Date.parse("2026-03-02T08:00:30Z") + waitMs + 60_000).toISOString());
  await expect.poll(rows).toEqual([{ at: "2026-03-03T08:00:00.000Z", failed: false }]);
  expect(world.sent().map((m) => m.content)).toEqual(["Standup time!"]);
});
