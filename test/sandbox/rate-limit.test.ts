/**
 * The sandbox's rate limits as the server keeps them: on by default, two buckets per user
 * (GET/DELETE /events apart from every other call), both windows, headers for the last rule,
 * 429 with a float retry-after, per-user rules, all on the sandbox clock.
 */
import { expect } from "vitest";
import { BOT, MEMBER, test } from "../support/sandbox/fixture.ts";

// A still base clock: only `advanceClock` moves the sandbox's time, so the windows are exact.
test.override({ sandboxOptions: { clock: { now: () => 1_750_000_000_000 } } });

const RATE_MSG =
  "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers";

test("on by default: every authenticated response reports the hourly window", async ({ sb }) => {
  const bot = sb.as(BOT);
  const first = await bot.get("/users/me");
  expect(first.headers["x-ratelimit-limit"]).toBe("2000");
  expect(first.headers["x-ratelimit-remaining"]).toBe("1999");
  const reset = Number(first.headers["x-ratelimit-reset"]);
  expect(reset).toBe(Math.floor(sb.sandbox.control.now() / 1000 + 3600));
  expect((await bot.get("/users/me")).headers["x-ratelimit-remaining"]).toBe("1998");
  expect((await sb.anon.get("/server_settings")).headers["x-ratelimit-limit"]).toBeUndefined();
});

test("the event-queue calls count in their own bucket", async ({ sb }) => {
  const bot = sb.as(BOT);
  const { queue_id } = await bot.register();
  const poll = await bot.get("/events", { queue_id, last_event_id: -1, dont_block: true });
  expect(poll.status).toBe(200);
  // The register is the first call of the `other` bucket, the poll the first of `events`.
  expect(poll.headers["x-ratelimit-remaining"]).toBe("1999");
  expect((await bot.get("/users/me")).headers["x-ratelimit-remaining"]).toBe("1998");
  expect((await bot.delete("/events", { queue_id })).headers["x-ratelimit-remaining"]).toBe("1998");
  expect(sb.sandbox.control.rateLimitCount(BOT, "events")).toEqual({ calls: 2, refused: 0 });
  expect(sb.sandbox.control.rateLimitCount(BOT, "other")).toEqual({ calls: 2, refused: 0 });
});

test("the 201st call of a minute is refused with the real body; other buckets and users go on", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const { queue_id } = await bot.register();
  for (let i = 0; i < 199; i++) expect((await bot.get("/users/me")).status).toBe(200);
  sb.sandbox.control.advanceClock(1500);
  const limited = await bot.get("/users/me");
  expect(limited.status).toBe(429);
  expect(limited.body).toEqual({
    result: "error",
    msg: RATE_MSG,
    code: "RATE_LIMIT_HIT",
    "retry-after": limited.body["retry-after"],
  });
  // The oldest call leaves the window 58.5 s from now: a float, in the header too ("58.5").
  expect(limited.body["retry-after"]).toBe(58.5);
  expect(limited.headers["retry-after"]).toBe("58.5");
  expect(limited.headers["x-ratelimit-remaining"]).toBe("0");
  const poll = await bot.get("/events", { queue_id, last_event_id: -1, dont_block: true });
  expect(poll.status).toBe(200);
  expect((await sb.as(MEMBER).get("/users/me")).status).toBe(200);
  expect(sb.sandbox.control.rateLimitCount(BOT, "other")).toEqual({ calls: 200, refused: 1 });
  sb.sandbox.control.advanceClock(58_500);
  expect((await bot.get("/users/me")).status).toBe(200);
});

test("the hourly window holds after the minute frees up", async ({ sb }) => {
  sb.sandbox.control.setUserRateLimit(BOT, [
    [3600, 5],
    [60, 3],
  ]);
  const bot = sb.as(BOT);
  for (let i = 0; i < 3; i++) expect((await bot.get("/users/me")).status).toBe(200);
  expect((await bot.get("/users/me")).status).toBe(429);
  sb.sandbox.control.advanceClock(60_000);
  const fourth = await bot.get("/users/me");
  // Rules are applied shortest window first; the headers report the longest.
  expect(fourth.headers["x-ratelimit-limit"]).toBe("5");
  expect(fourth.headers["x-ratelimit-remaining"]).toBe("1");
  expect((await bot.get("/users/me")).status).toBe(200);
  const hourly = await bot.get("/users/me");
  expect(hourly.status).toBe(429);
  expect(hourly.body["retry-after"]).toBe(3540);
  expect((await sb.as(MEMBER).get("/users/me")).headers["x-ratelimit-limit"]).toBe("2000");
  sb.sandbox.control.setUserRateLimit(BOT, undefined);
  expect((await bot.get("/users/me")).status).toBe(200);
});

test("rules are checked: a clear error names the bad one", ({ sb }) => {
  expect(() => sb.sandbox.control.setUserRateLimit(BOT, [[60, 0]])).toThrow(
    "rate-limit rules must be [window seconds > 0, calls ≥ 1] pairs; rule 0 is [60,0].",
  );
  expect(() => sb.sandbox.control.setUserRateLimit("nobody@sandbox.example", [[60, 1]])).toThrow(
    'No sandbox account with email "nobody@sandbox.example" (the org has',
  );
});
