import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { createScheduleApi, type ScheduleApi } from "../../src/effects/schedule/schedule-api.ts";
import { ScheduledMessageError } from "../../src/effects/schedule/scheduled-message-error.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { BOT, createWorld, iso, MEMBER, type SchedulerWorld } from "../support/scheduler-harness.ts";

const T0 = Date.parse("2026-03-02T07:00:00Z");
const MINUTE = 60_000;

let clock: ManualClock;
let sandbox: Sandbox;
let schedule: ScheduleApi<{ scheduledMessageId: number }>;

function oneShot() {
  beforeEach(async () => {
    clock = new ManualClock(T0);
    sandbox = await startSandbox({ clock: { now: () => clock.now() } });
    sandbox.control.createUser({
      email: BOT,
      full_name: "Herald",
      bot: "generic",
      owner: "owner@sandbox.example",
    });
    const client = createClient({
      url: sandbox.url,
      email: BOT,
      apiKey: sandbox.control.apiKeyOf(BOT),
      retry: false,
    });
    schedule = createScheduleApi({
      client,
      clock,
      limits: () => ({ maxMessageLength: 100, maxTopicLength: 60 }),
    });
  });
  afterEach(() => sandbox.stop());
}

const userId = (email: string) => sandbox.control.users().find((u) => u.email === email)!.user_id;

/** The error `promise` rejects with, for exact assertions on code, field and message. */
async function failure(
  promise: Promise<unknown>,
): Promise<Pick<ScheduledMessageError, "code" | "field" | "message">> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ScheduledMessageError);
  const { code, field, message } = err as ScheduledMessageError;
  return { code, field, message };
}

describe("ctx.schedule one-shot messages", () => {
  oneShot();
  it("books for a channel by name and lists it back in camelCase; a Date or milliseconds both work", async () => {
    const { scheduledMessageId } = await schedule.at({
      to: "general",
      topic: "reminders",
      content: "Retro in 10 minutes!",
      at: new Date(T0 + 30 * MINUTE),
    });
    const second = await schedule.at({
      to: 1,
      topic: "reminders",
      content: "Retro now",
      at: T0 + 40 * MINUTE + 1,
    });
    expect(await schedule.list()).toEqual([
      {
        scheduledMessageId,
        type: "channel",
        to: 1,
        topic: "reminders",
        content: "Retro in 10 minutes!",
        at: new Date(T0 + 30 * MINUTE),
        failed: false,
      },
      // Milliseconds round UP to whole seconds: rounding down could land in the past.
      expect.objectContaining({
        scheduledMessageId: second.scheduledMessageId,
        at: new Date(T0 + 40 * MINUTE + 1000),
      }),
    ]);
  });

  it("books a direct message by emails and ids (the server wants ids only)", async () => {
    const memberId = userId(MEMBER);
    const ownerId = userId("owner@sandbox.example");
    await schedule.at({ to: [MEMBER, ownerId, memberId], content: "psst", at: T0 + MINUTE });
    expect(sandbox.control.scheduled()).toMatchObject([
      { type: "private", to: [memberId, ownerId].sort((a, b) => a - b), content: "psst" },
    ]);
  });

  it("refuses bad input with SCHEDULE_INVALID naming the field, before calling the server", async () => {
    const base = { to: "general", topic: "t", content: "hi", at: T0 + MINUTE };
    expect(await failure(schedule.at({ ...base, at: T0 }))).toEqual({
      code: "SCHEDULE_INVALID",
      field: "at",
      message:
        'schedule.at: "at" (2026-03-02T07:00:00.000Z) is not in the future (it is now 2026-03-02T07:00:00.000Z); pick a later time.',
    });
    expect(await failure(schedule.at({ ...base, at: new Date("nope") }))).toEqual({
      code: "SCHEDULE_INVALID",
      field: "at",
      message: 'schedule.at: "at" must be a Date or milliseconds since the epoch; got an invalid Date.',
    });
    expect(await failure(schedule.at({ ...base, content: "  \n" }))).toMatchObject({
      field: "content",
      message: 'schedule.at: "content" must be a non-empty string (Markdown); got "  \\n".',
    });
    expect(await failure(schedule.at({ ...base, content: "x".repeat(101) }))).toMatchObject({
      field: "content",
      message:
        'schedule.at: "content" is 101 characters; the server allows 100. Shorten it or split it into several messages.',
    });
    // The server would cut it to 57 + "...": a lost answer's read-back would look under the whole topic.
    expect(await failure(schedule.at({ ...base, topic: "t".repeat(70) }))).toMatchObject({
      field: "topic",
      message: 'schedule.at: "topic" is 70 characters; the server allows 60.',
    });
    expect(await failure(schedule.at({ ...base, topic: undefined }))).toMatchObject({
      field: "topic",
      message: 'schedule.at: "topic" is required for a channel message; got nothing.',
    });
    expect(await failure(schedule.at({ ...base, to: [] }))).toMatchObject({
      field: "to",
      message: 'schedule.at: "to" is an empty list; name at least one user for a direct message.',
    });
    expect(sandbox.control.requests.filter((r) => r.path === "/scheduled_messages")).toEqual([]);
  });

  it("an unknown channel or user is SCHEDULE_INVALID on `to`, with a hint", async () => {
    const base = { topic: "t", content: "hi", at: T0 + MINUTE };
    expect(await failure(schedule.at({ ...base, to: "nowhere" }))).toEqual({
      code: "SCHEDULE_INVALID",
      field: "to",
      message:
        'schedule.at: "to" names no channel this bot can see: "nowhere". Check the spelling, that the channel exists and the bot can see it, or pass its id.',
    });
    expect(await failure(schedule.at({ ...base, to: MEMBER }))).toMatchObject({
      message: `schedule.at: "to" names no channel this bot can see: "${MEMBER}". For a direct message, pass a list: to: ["${MEMBER}"].`,
    });
    expect(await failure(schedule.at({ ...base, to: ["ghost@sandbox.example"] }))).toMatchObject({
      field: "to",
      message:
        'schedule.at: "to" names no user this bot can see: "ghost@sandbox.example" (the email may be hidden from bots; pass the user id instead).',
    });
    expect(await failure(schedule.at({ ...base, to: 999 }))).toEqual({
      code: "SCHEDULE_INVALID",
      field: "to",
      message: 'schedule.at: "to" channel 999 does not exist or the bot cannot see it.',
    });
  });

  it("cancel removes it; cancelling or rescheduling an unknown id is SCHEDULE_NOT_FOUND", async () => {
    const { scheduledMessageId } = await schedule.at({
      to: "general",
      topic: "t",
      content: "hi",
      at: T0 + MINUTE,
    });
    await schedule.cancel(scheduledMessageId);
    expect(await schedule.list()).toEqual([]);
    expect(await failure(schedule.cancel(scheduledMessageId))).toEqual({
      code: "SCHEDULE_NOT_FOUND",
      field: "id",
      message: `schedule.cancel: scheduled message ${scheduledMessageId} does not exist: it was already sent, cancelled, or belongs to another account.`,
    });
    expect(await failure(schedule.reschedule(scheduledMessageId, T0 + 5 * MINUTE))).toMatchObject({
      code: "SCHEDULE_NOT_FOUND",
    });
    expect(await failure(schedule.cancel(-1))).toEqual({
      code: "SCHEDULE_INVALID",
      field: "id",
      message:
        "schedule.cancel: the id must be a scheduledMessageId from schedule.at() or schedule.list(); got -1.",
    });
  });

  it("cancel or reschedule of a booking found already sent says so, naming its message", async () => {
    const sent = { sentMessageId: 42 };
    for (const [where, call] of [
      ["cancel", schedule.cancel(sent)],
      ["reschedule", schedule.reschedule(sent, T0 + 5 * MINUTE)],
    ] as const) {
      expect(await failure(call)).toEqual({
        code: "SCHEDULE_NOT_FOUND",
        field: "id",
        message: `schedule.${where}: the booking was already sent, as message 42; there is no booking left to change.`,
      });
    }
    // Its scheduledMessageId, undefined, passed on: the error says why it may be missing.
    expect(await failure(schedule.cancel(undefined as unknown as number))).toEqual({
      code: "SCHEDULE_INVALID",
      field: "id",
      message:
        "schedule.cancel: the id must be a scheduledMessageId from schedule.at() or schedule.list(); got nothing " +
        "(a booking schedule.at found already sent has no scheduledMessageId: its result's sentMessageId names the message it became).",
    });
    const booked = await schedule.at({ to: "general", topic: "t", content: "hi", at: T0 + MINUTE });
    await schedule.reschedule(booked, T0 + 2 * MINUTE);
    await schedule.cancel(booked);
    expect(await schedule.list()).toEqual([]);
  });

  it("a failed message (more than 10 minutes late) is revived by rescheduling it to a new time", async () => {
    const { scheduledMessageId } = await schedule.at({
      to: "general",
      topic: "t",
      content: "late news",
      at: T0 + MINUTE,
    });
    await clock.tickTo(T0 + 12 * MINUTE);
    sandbox.control.advanceClock(0);
    expect(await schedule.list()).toMatchObject([{ scheduledMessageId, failed: true }]);
    expect(await failure(schedule.reschedule(scheduledMessageId, T0 + 5 * MINUTE))).toMatchObject({
      field: "at",
      message:
        'schedule.reschedule: "at" (2026-03-02T07:05:00.000Z) is not in the future (it is now 2026-03-02T07:12:00.000Z); pick a later time.',
    });
    await schedule.reschedule(scheduledMessageId, T0 + 13 * MINUTE);
    expect(await schedule.list()).toMatchObject([
      { scheduledMessageId, failed: false, at: new Date(T0 + 13 * MINUTE) },
    ]);
    await clock.tickTo(T0 + 13 * MINUTE);
    sandbox.control.advanceClock(0);
    expect(await schedule.list()).toEqual([]);
    expect(sandbox.control.messages().filter((m) => m.content === "late news")).toHaveLength(1);
  });

  it("the server's own clock check is reported as SCHEDULE_INVALID too (clock skew)", async () => {
    const skewed = createScheduleApi({
      client: createClient({
        url: sandbox.url,
        email: BOT,
        apiKey: sandbox.control.apiKeyOf(BOT),
        retry: false,
      }),
      clock: { now: () => T0 - 10 * MINUTE }, // this machine is 10 minutes behind the server
    });
    expect(await failure(skewed.at({ to: "general", topic: "t", content: "hi", at: T0 - MINUTE }))).toEqual({
      code: "SCHEDULE_INVALID",
      field: "at",
      message:
        "schedule.at: the server says the time is not in the future (its clock may be ahead of this machine's); pick a time at least a minute ahead.",
    });
  });
});

describe("ctx.schedule and bot.schedule in a running bot", () => {
  let world: SchedulerWorld;
  afterEach(() => world?.dispose());

  it("a handler books with ctx.schedule; setup code can keep bot.schedule for later", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    let outside: ScheduleApi | undefined;
    await world.start((bot) => {
      outside = bot.schedule;
      bot.on("message", { direct: true }, async (ctx) => {
        const { scheduledMessageId } = await ctx.schedule.at({
          to: [ctx.event.message.sender_id],
          content: "Here is your reminder.",
          at: world.clock.now() + 30 * MINUTE,
        });
        await ctx.reply(`Booked #${scheduledMessageId}.`);
      });
    });
    world.sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "remind me" });
    await expect
      .poll(() => world.sent().map((m) => m.content))
      .toEqual([expect.stringMatching(/^Booked #\d+\.$/)]);
    const booked = await outside!.list();
    const memberId = world.sandbox.control.users().find((u) => u.email === MEMBER)!.user_id;
    expect(booked).toMatchObject([{ type: "direct", to: [memberId], content: "Here is your reminder." }]);
    expect(iso(booked[0]!.at.getTime() / 1000)).toBe("2026-03-02T07:30:00.000Z");
  });
});
