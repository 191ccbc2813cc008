import { SandboxControlError } from "../../src/testing.ts";
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, test } from "../support/sandbox/fixture.ts";

const RATE_MSG =
  "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers";

test("failNext answers the next matching requests with a canned failure", async ({ sb }) => {
  sb.sandbox.control.failNext(2, { status: 502, nonJson: true, paths: ["/events"] });
  const q = await openQueue(sb.as(BOT));
  expect((await sb.as(BOT).get("/users/me")).status).toBe(200);
  const first = await q.caller.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true });
  expect(first.status).toBe(502);
  expect(first.body).toBeUndefined();
  expect(first.text).toContain("502");
  expect(
    (await q.caller.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true })).status,
  ).toBe(502);
  expect(
    (await q.caller.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true })).status,
  ).toBe(200);
  sb.sandbox.control.failNext(1, { status: 500, body: { result: "error", msg: "Internal server error" } });
  const five = await sb.as(BOT).get("/users/me");
  expect(five.status).toBe(500);
  expect(five.body).toEqual({ result: "error", msg: "Internal server error" });
});

test("an injected fault without a body answers as the real server (or its proxy) does for its status", async ({
  sb,
}) => {
  const answer = async (status: number) => {
    sb.sandbox.control.failNext(1, { status, paths: ["/users/me"] });
    return sb.as(BOT).get("/users/me");
  };
  for (const [status, reason] of [
    [502, "Bad Gateway"],
    [503, "Service Unavailable"],
    [504, "Gateway Timeout"],
  ] as const) {
    const proxy = await answer(status);
    expect([proxy.status, proxy.body]).toEqual([status, undefined]);
    expect(proxy.text).toContain(`${status} ${reason}`);
  }
  const five = await answer(500);
  expect([five.status, five.body]).toEqual([500, { result: "error", msg: "Internal server error" }]);
  const bad = await answer(400);
  expect(bad.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
});

test("rateLimitNext gives real 429 bodies with a float retry-after", async ({ sb }) => {
  sb.sandbox.control.rateLimitNext(1, 2.5);
  const reply = await sb.as(BOT).get("/users/me");
  expect(reply.status).toBe(429);
  expect(reply.body).toEqual({ result: "error", msg: RATE_MSG, code: "RATE_LIMIT_HIT", "retry-after": 2.5 });
  expect(reply.headers["retry-after"]).toBe("2.5");
  sb.sandbox.control.rateLimitNext(1, 3);
  expect((await sb.as(BOT).get("/users/me")).headers["retry-after"]).toBe("3.0");
  expect((await sb.as(BOT).get("/users/me")).status).toBe(200);
});

test("an injected 429 carries the X-RateLimit-* headers of a counted one, for the caller's rules", async ({
  sb,
}) => {
  sb.sandbox.control.setUserRateLimit(BOT, [
    [60, 3],
    [3600, 7],
  ]);
  sb.sandbox.control.rateLimitNext(2, 2.5);
  const before = Date.now();
  const reply = await sb.as(BOT).get("/users/me");
  const after = Date.now();
  expect(reply.status).toBe(429);
  expect(reply.headers["x-ratelimit-limit"]).toBe("7");
  expect(reply.headers["x-ratelimit-remaining"]).toBe("0");
  const reset = Number(reply.headers["x-ratelimit-reset"]);
  expect(reset).toBeGreaterThanOrEqual(Math.floor(before / 1000 + 2.5));
  expect(reset).toBeLessThanOrEqual(Math.floor(after / 1000 + 2.5));
  // A caller without valid credentials gets the sandbox's rules.
  expect((await sb.anon.get("/server_settings")).headers["x-ratelimit-limit"]).toBe("2000");
  expect(sb.sandbox.control.rateLimitCount(BOT, "other")).toEqual({ calls: 0, refused: 0 });
});

test("the real limiter counts per user over a sliding window; headers report the last rule", async ({
  sb,
}) => {
  sb.sandbox.control.setRateLimit({
    rules: [
      [60, 3],
      [3600, 10],
    ],
  });
  const bot = sb.as(BOT);
  const ok = await bot.get("/users/me");
  expect(ok.headers["x-ratelimit-limit"]).toBe("10");
  expect(ok.headers["x-ratelimit-remaining"]).toBe("9");
  await bot.get("/users/me");
  await bot.get("/users/me");
  const limited = await bot.get("/users/me");
  expect(limited.status).toBe(429);
  expect(limited.body.code).toBe("RATE_LIMIT_HIT");
  expect(limited.body["retry-after"]).toBeGreaterThan(0);
  expect(limited.body["retry-after"]).toBeLessThanOrEqual(60);
  expect(Number(limited.headers["retry-after"])).toBe(limited.body["retry-after"]);
  expect((await sb.as(MEMBER).get("/users/me")).status).toBe(200);
  sb.sandbox.control.advanceClock(61_000);
  expect((await bot.get("/users/me")).status).toBe(200);
  sb.sandbox.control.setRateLimit(true);
  expect((await bot.get("/users/me")).headers["x-ratelimit-limit"]).toBe("2000");
  sb.sandbox.control.setRateLimit(false);
  expect((await bot.get("/users/me")).headers["x-ratelimit-limit"]).toBeUndefined();
});

test("resetConnections destroys the socket of the next request", async ({ sb }) => {
  sb.sandbox.control.resetConnections(1);
  await expect(sb.as(BOT).get("/users/me")).rejects.toThrow();
  expect((await sb.as(BOT).get("/users/me")).status).toBe(200);
  expect(sb.sandbox.control.requests.map((r) => [r.method, r.path, r.status])).toEqual([
    ["GET", "/users/me", -1],
    ["GET", "/users/me", 200],
  ]);
});

test("delay holds matching requests until cleared", async ({ sb }) => {
  const control = sb.sandbox.control;
  control.delay(60_000, { paths: ["/users/me"] });
  const order: string[] = [];
  const slow = sb
    .as(BOT)
    .get("/users/me")
    .then((res) => order.push(`slow ${res.status}`));
  await control.waitFor(() => control.delayed() === 1);
  // Other paths are not held.
  await sb.anon.get("/server_settings").then(() => order.push("fast"));
  expect(order).toEqual(["fast"]);
  // The clear lets the held request go on, long before its minute.
  control.delay(0);
  await slow;
  expect(order).toEqual(["fast", "slow 200"]);
  expect(control.delayed()).toBe(0);
  expect((await sb.as(BOT).get("/users/me")).status).toBe(200);
});

test("delay with methods holds only those: a send is held while a read of the same path goes on", async ({
  sb,
}) => {
  const control = sb.sandbox.control;
  control.delay(60_000, { paths: ["/messages"], methods: ["POST"] });
  const send = sb.as(BOT).post("/messages", { type: "stream", to: "general", topic: "t", content: "held" });
  await control.waitFor(() => control.delayed() === 1);
  const read = await sb.as(BOT).get("/messages", { anchor: "newest", num_before: 1, num_after: 0 });
  expect(read.status).toBe(200);
  expect(control.delayed()).toBe(1);
  control.delay(0);
  expect((await send).status).toBe(200);
});

test("delay with after carries the request out and holds its answer: the message is stored while its sender waits", async ({
  sb,
}) => {
  const control = sb.sandbox.control;
  control.delay(60_000, { paths: ["/messages"], methods: ["POST"], after: true });
  let answered = false;
  const send = sb
    .as(BOT)
    .post("/messages", { type: "stream", to: "general", topic: "t", content: "landed" })
    .finally(() => {
      answered = true;
    });
  await control.waitFor(() => control.delayed() === 1);
  // Stored, its answer not given.
  expect(control.messages().map((m) => m.content)).toContain("landed");
  expect(answered).toBe(false);
  control.delay(0);
  const res = await send;
  expect(res.status).toBe(200);
  expect(control.messages().filter((m) => m.content === "landed")).toHaveLength(1);
});

test("a held request goes on by itself once its delay has passed", async ({ sb }) => {
  const control = sb.sandbox.control;
  control.delay(20, { paths: ["/users/me"] });
  expect((await sb.as(BOT).get("/users/me")).status).toBe(200);
  expect(control.delayed()).toBe(0);
  control.delay(0);
});

test("hangNextPoll: the next long-poll never answers", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT));
  sb.sandbox.control.hangNextPoll();
  const abort = new AbortController();
  let settled = false;
  const hung = q.caller.get("/events", { queue_id: q.id, last_event_id: -1 }, abort.signal).finally(() => {
    settled = true;
  });
  await sb.sandbox.control.waitFor(() => sb.sandbox.control.requests.some((r) => r.status === 0));
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "x" });
  expect((await q.peek()).length).toBe(1);
  expect(settled).toBe(false);
  expect(sb.sandbox.control.queues().find((x) => x.queue_id === q.id)?.parked).toBe(false);
  abort.abort();
  await expect(hung).rejects.toThrow();
});

test("restartQueues cuts parked polls and queues a restart event", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT));
  const parked = q.caller.get("/events", { queue_id: q.id, last_event_id: -1 });
  await sb.sandbox.control.waitFor(
    () => sb.sandbox.control.queues().find((x) => x.queue_id === q.id)?.parked,
  );
  sb.sandbox.control.restartQueues();
  await expect(parked).rejects.toThrow();
  const [event] = await q.peek();
  expect(event).toMatchObject({ type: "restart", zulip_feature_level: 496, id: 0 });
  expect(typeof event!.server_generation).toBe("number");
});

test("expireQueue by id or by user", async ({ sb }) => {
  const a = await openQueue(sb.as(BOT));
  const b = await openQueue(sb.as(BOT));
  sb.sandbox.control.expireQueue(a.id);
  expect(
    (await a.caller.get("/events", { queue_id: a.id, last_event_id: -1, dont_block: true })).body.code,
  ).toBe("BAD_EVENT_QUEUE_ID");
  expect(await b.peek()).toEqual([]);
  sb.sandbox.control.expireQueue({ email: BOT });
  expect(sb.sandbox.control.queues()).toEqual([]);
});

test("waitFor resolves on a state change and rejects on timeout", async ({ sb }) => {
  const waiting = sb.sandbox.control.waitFor(() =>
    sb.sandbox.control.messages().find((m) => m.content === "ping"),
  );
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "ping" });
  expect((await waiting).content).toBe("ping");
  await expect(sb.sandbox.control.waitFor(() => false, { timeoutMs: 20 })).rejects.toBeInstanceOf(
    SandboxControlError,
  );
});

test("control helpers: users, apiKeyOf, createUser errors, sendAs errors", async ({ sb }) => {
  const c = sb.sandbox.control;
  expect(c.users().map((u) => u.email)).toEqual(["owner@sandbox.example", MEMBER, BOT]);
  expect(c.apiKeyOf(BOT)).toMatch(/^[A-Za-z0-9]{32}$/);
  expect(() => c.apiKeyOf("nobody@x")).toThrow(
    `No sandbox account with email "nobody@x" (the org has owner@sandbox.example, ${MEMBER}, ${BOT}).`,
  );
  expect(() => c.apiKeyOf("bott@sandbox.example")).toThrow(
    `No sandbox account with email "bott@sandbox.example": did you mean ${BOT}? (the org has owner@sandbox.example, ${MEMBER}, ${BOT}).`,
  );
  expect(() => c.createUser({ email: MEMBER, full_name: "Dup" })).toThrow("already exists");
  expect(() => c.sendAs(MEMBER, { type: "stream", to: "nowhere", topic: "t", content: "x" })).toThrow(
    "Channel 'nowhere' does not exist",
  );
});
