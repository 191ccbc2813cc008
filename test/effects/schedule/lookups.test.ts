/**
 * `ctx.schedule.at` turns a channel name or emails into ids with the bot's caches: the users a
 * registration brought and the channels already resolved cost no request; only what the caches
 * do not know is asked of the server, and what the server does not know is refused by name. An
 * email's id, once found, is kept an hour: a bot that does not track users, booking for the same
 * people each run, asks for each of them once, not at every run, whichever path books: `ctx.schedule`,
 * `bot.schedule`, a recurring announcement, or a context without the bot's helpers.
 */
import { afterEach, expect, it } from "vitest";
import type { BotApi } from "../../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../../src/bot/define-bot.ts";
import { createScheduleApi } from "../../../src/effects/schedule/schedule-api.ts";
import { LazyBaseContext } from "../../../src/pipeline/context.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { BookingServer } from "../../../src/scheduler/booking-server.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { type BotDaemon, requestsSince, startBots } from "../../support/bot-daemon.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";

let sandbox: Sandbox | undefined;
let running: BotDaemon | undefined;

afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  running = undefined;
  sandbox = undefined;
});

async function start() {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  const definition = {
    setup(bot: BotApi) {
      bot.track("users");
      bot.on("message", () => {});
    },
  } as BotDefinition;
  running = await startBots(sandbox, { helper: { email: BOT, definition } });
  return { s: sandbox, ctx: running.context() };
}

const lookups = (s: Sandbox, from: number) =>
  requestsSince(s, from).filter((r) => r.startsWith("GET /users") || r.startsWith("GET /get_stream_id"));

it("books to an email the registration brought, and to a channel resolved once, with no lookup request", async () => {
  const { s, ctx } = await start();
  const at = s.control.now() + 3_600_000;
  const member = s.control.users().find((u) => u.email === MEMBER)!.user_id;
  const mark = s.control.requests.length;

  await ctx.schedule.at({ to: [MEMBER], content: "one", at });
  await ctx.schedule.at({ to: "general", topic: "t", content: "two", at });
  await ctx.schedule.at({ to: "General", topic: "t", content: "three", at });

  expect(lookups(s, mark)).toEqual(["GET /get_stream_id"]);
  const booked = (await ctx.schedule.list()).map((m) => [m.type, m.to, m.content]);
  expect(booked).toEqual([
    ["direct", [member], "one"],
    ["channel", 1, "two"],
    ["channel", 1, "three"],
  ]);
});

it("asks the server for an email the caches do not know, and refuses one it does not know either", async () => {
  const { s, ctx } = await start();
  const at = s.control.now() + 3_600_000;
  const late = s.control.createUser({ email: "late@sandbox.example", full_name: "Late" });
  const mark = s.control.requests.length;

  await ctx.schedule.at({ to: ["late@sandbox.example"], content: "hi", at });
  const err = await ctx.schedule
    .at({ to: ["nobody@sandbox.example"], content: "hi", at })
    .catch((e: unknown) => e);

  expect(lookups(s, mark)).toEqual([
    "GET /users/late%40sandbox.example",
    "GET /users/nobody%40sandbox.example",
  ]);
  expect((await ctx.schedule.list()).map((m) => m.to)).toEqual([[late.user_id]]);
  expect(err).toMatchObject({ code: "SCHEDULE_INVALID", field: "to" });
  expect(String((err as Error).message)).toContain(
    'names no user this bot can see: "nobody@sandbox.example"',
  );
});

/** A bot not tracking users, 20 people the server knows, rate limits on. */
async function twentyPeople() {
  const clock = new TestClock();
  sandbox = await startSandbox({ heartbeatSeconds: 1, clock });
  const s = sandbox;
  s.control.setRateLimit(true);
  const people = Array.from({ length: 20 }, (_, i) => `person${i}@sandbox.example`);
  for (const email of people) s.control.createUser({ email, full_name: email.split("@")[0]! });
  const definition = {
    setup(bot: BotApi) {
      bot.on("message", () => {});
    },
  } as BotDefinition;
  running = await startBots(s, { helper: { email: BOT, definition } }, { clock });
  const runtime = running.daemon.bots.find((b) => b.name === "helper")!;
  return { s, clock, people, runtime, bots: running, at: () => s.control.now() + 3_600_000 };
}

/** GET /users/{email} (not GET /users/me, which a direct announcement asks once for the bot's own id). */
const userLookups = (s: Sandbox, from: number) =>
  lookups(s, from).filter((r) => r.startsWith("GET /users/") && r.includes("%40"));

it("a bot not tracking users, booking for the same 20 people at runs minutes apart, asks for each once", async () => {
  const { s, clock, people, bots } = await twentyPeople();
  const mark = s.control.requests.length;
  for (let run = 1; run <= 3; run++) {
    // Each run a context of its own, minutes after the last (past the user cache's minute).
    await bots.context().schedule.at({ to: people, content: `run ${run}`, at: s.control.now() + 3_600_000 });
    await clock.advance(5 * 60_000);
  }
  expect(lookups(s, mark).filter((r) => r.startsWith("GET /users/"))).toHaveLength(people.length);
  expect((await bots.context().schedule.list()).map((m) => (m.to as number[]).length)).toEqual([20, 20, 20]);
  // Refused by name still, and not kept: asked again each time.
  for (let i = 0; i < 2; i++) {
    const err = await bots
      .context()
      .schedule.at({
        to: [...people, "nobody@sandbox.example"],
        content: "hi",
        at: s.control.now() + 3_600_000,
      })
      .catch((e: unknown) => e);
    expect(String((err as Error).message)).toContain(
      'names no user this bot can see: "nobody@sandbox.example"',
    );
  }
  expect(lookups(s, mark).filter((r) => r.endsWith("/nobody%40sandbox.example"))).toHaveLength(2);
});

it("bot.schedule shares ctx.schedule's kept ids: booking for the same 20 people at runs minutes apart asks for each once", async () => {
  const { s, clock, people, runtime, bots, at } = await twentyPeople();
  const mark = s.control.requests.length;
  await bots.context().schedule.at({ to: people, content: "ctx", at: at() });
  for (let run = 1; run <= 2; run++) {
    await clock.advance(5 * 60_000);
    await runtime.scheduler.schedule.at({ to: people, content: `bot ${run}`, at: at() });
  }
  expect(userLookups(s, mark)).toHaveLength(people.length);
  expect((await runtime.scheduler.schedule.list()).map((m) => (m.to as number[]).length)).toEqual([
    20, 20, 20,
  ]);
});

it("without the bot's helpers, a context, the schedule API and a recurring announcement over one client share kept ids", async () => {
  const { s, clock, people, runtime, at } = await twentyPeople();
  const { services: _, ...bare } = runtime.contextDeps();
  const client = bare.api;
  const mark = s.control.requests.length;
  for (let run = 1; run <= 2; run++) {
    const ctx = new LazyBaseContext(bare, new AbortController().signal, "on-start", { test: true });
    await ctx.schedule.at({ to: people, content: `ctx ${run}`, at: at() });
    await clock.advance(5 * 60_000);
  }
  await createScheduleApi({ client, clock }).at({ to: people, content: "api", at: at() });
  const server = new BookingServer(client, {
    clock,
    emptyTopicName: () => "general chat",
    maxMessageLength: () => undefined,
    maxTopicLength: () => undefined,
  });
  const target = await server.target("standup", {
    cron: "0 9 * * *",
    timezone: "UTC",
    to: people,
    content: "standup",
  });
  expect((target.to as number[]).length).toBe(20);
  expect(userLookups(s, mark)).toHaveLength(people.length);
});
