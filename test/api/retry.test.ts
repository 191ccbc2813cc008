import { createServer } from "node:net";
import { describe, expect } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { ApiError, BadResponseError, NetworkError, RateLimitError } from "../../src/api/errors.ts";
import { API_KEY, EMAIL, test } from "../support/api/client-fixture.ts";
import { FakeClock } from "../support/api/fake-clock.ts";
import * as rec from "../support/api/records.ts";
import { failure, success } from "../support/api/test-server.ts";
import { ManualClock } from "../support/manual-clock.ts";

const rateLimited = (seconds: number | undefined, header?: string) =>
  failure(
    429,
    {
      msg: "API usage exceeded rate limit; see https://zulip.com/api/http-headers#rate-limiting-response-headers",
      code: "RATE_LIMIT_HIT",
      ...(seconds === undefined ? {} : { "retry-after": seconds }),
    },
    header === undefined ? undefined : { "retry-after": header },
  );
const sendParams = { type: "channel", to: 5, topic: "t", content: "c" } as const;

describe("429: wait the server's retry-after, then retry", () => {
  test("waits the float retry-after from the body (0.25 s → 250 ms) and succeeds", async ({
    server,
    clock,
    makeClient,
  }) => {
    server.reply(rateLimited(0.25, "0.25"), success(rec.ownUser));
    const me = await makeClient().users.me();
    expect(me.user_id).toBe(30);
    expect(clock.sleeps).toEqual([250]);
    expect(server.requests).toHaveLength(2);
  });

  test("reads the Retry-After header when the body has none", async ({ server, clock, makeClient }) => {
    server.reply(rateLimited(undefined, "28.706807374954224"), success());
    await makeClient().events.deleteQueue("q1");
    expect(clock.sleeps).toEqual([28707]);
  });

  test("retries messages.send too: the server did not act on a 429", async ({
    server,
    clock,
    makeClient,
  }) => {
    server.reply(rateLimited(1.5), success({ id: 7 }));
    await expect(makeClient().messages.send(sendParams)).resolves.toEqual({ id: 7 });
    expect(clock.sleeps).toEqual([1500]);
    expect(server.requests).toHaveLength(2);
  });

  test("after the attempts are used up, raises RateLimitError with the wait", async ({
    server,
    clock,
    makeClient,
  }) => {
    server.fallback = rateLimited(0.5);
    const err = await makeClient({ retry: { maxAttempts: 3 } })
      .users.me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toBeInstanceOf(ApiError);
    const limited = err as RateLimitError;
    expect(limited.code).toBe("RATE_LIMIT_HIT");
    expect(limited.status).toBe(429);
    expect(limited.retryAfterMs).toBe(500);
    expect(limited.data).toEqual({ "retry-after": 0.5 });
    expect(limited.message).toMatchInlineSnapshot(
      `"GET /users/me: rate limit hit (429 RATE_LIMIT_HIT); the server asks to wait 0.500 s. Make fewer calls (this client's rate limit is off (rateLimit: false), so it holds no call back) or retry after the wait."`,
    );
    expect(server.requests).toHaveLength(3);
    expect(clock.sleeps).toEqual([500, 500]);
  });

  test("the error quotes the limits the client keeps to, and the server's reported one", async ({
    server,
    makeClient,
  }) => {
    server.fallback = failure(
      429,
      { msg: "API usage exceeded rate limit", code: "RATE_LIMIT_HIT", "retry-after": 0.5 },
      { "x-ratelimit-limit": "600", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1" },
    );
    const err = await makeClient({ retry: false, rateLimit: { perMinute: 30, perHour: 300 } })
      .users.me()
      .catch((e: unknown) => e);
    expect((err as RateLimitError).message).toContain(
      "Make fewer calls (this client keeps to 30 per minute and 300 per hour for this account; " +
        "the server reports a limit of 600) or retry after the wait.",
    );
    expect((err as RateLimitError).message).not.toContain("200 per minute");
    const off = await makeClient({ retry: false, rateLimit: false })
      .users.me()
      .catch((e: unknown) => e);
    expect((off as RateLimitError).message).toContain(
      "Make fewer calls (this client's rate limit is off (rateLimit: false), so it holds no call back; " +
        "the server reports a limit of 600) or retry after the wait.",
    );
  });

  test("a wait longer than maxRateLimitWaitMs is raised at once", async ({ server, clock, makeClient }) => {
    server.fallback = rateLimited(3000);
    const err = await makeClient()
      .users.me()
      .catch((e: unknown) => e);
    expect((err as RateLimitError).retryAfterMs).toBe(3_000_000);
    expect(server.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });
});

describe("5xx, non-JSON bodies and network errors: backoff where safe", () => {
  test("5xx backoff is exponential with full jitter, capped, and bounded in attempts", async ({
    server,
    clock,
    makeClient,
  }) => {
    server.fallback = failure(503, { msg: "Service unavailable" });
    const client = makeClient({
      retry: { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 1500, random: () => 0.999 },
    });
    const err = await client.users.me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("HTTP_503");
    expect(server.requests).toHaveLength(5);
    // ceilings 500, 1000, 2000→1500, 4000→1500; the jitter draws just under each.
    expect(clock.sleeps).toEqual([499, 999, 1498, 1498]);
  });

  test("a non-JSON 502 is retried for an idempotent call, then succeeds", async ({
    server,
    clock,
    makeClient,
  }) => {
    server.reply({ status: 502, raw: "<html>Bad Gateway</html>" }, success(rec.ownUser));
    const me = await makeClient({ retry: { random: () => 0.5 } }).users.me();
    expect(me.email).toBe("bot@chat.example.org");
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([250]);
  });

  test("a call can turn retries off for itself (a caller with its own backoff)", async ({
    server,
    makeClient,
  }) => {
    server.reply({ status: 502, raw: "Bad Gateway" });
    const err = await makeClient()
      .events.get({ queue_id: "q", last_event_id: 1 }, { retry: false })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadResponseError);
    expect(server.requests).toHaveLength(1);
  });

  test("POST /register counts as safe to repeat", async ({ server, makeClient }) => {
    server.reply({ status: 502, raw: "Bad Gateway" }, success(rec.registerResponse));
    await makeClient().events.register({});
    expect(server.requests).toHaveLength(2);
  });

  test("messages.send is not repeated after a 502 or a 500", async ({ server, makeClient }) => {
    server.reply({ status: 502, raw: "<html>Bad Gateway</html>" });
    await expect(makeClient().messages.send(sendParams)).rejects.toBeInstanceOf(BadResponseError);
    server.reply(failure(500, { msg: "Internal server error" }));
    await expect(makeClient().messages.send(sendParams)).rejects.toMatchObject({ code: "HTTP_500" });
    expect(server.requests).toHaveLength(2);
  });

  test("messages.send is not repeated when the connection drops after the request was sent", async ({
    server,
    makeClient,
  }) => {
    server.reply({ destroy: true });
    const err = await makeClient()
      .messages.send(sendParams)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).requestSent).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  test("a GET is repeated after a dropped connection", async ({ server, makeClient }) => {
    server.reply({ destroy: true }, success({ topics: [] }));
    await expect(makeClient().channels.topics(5)).resolves.toEqual({ topics: [] });
    expect(server.requests).toHaveLength(2);
  });

  test("a refused connection never reached the server, so even messages.send is retried", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const clock = new FakeClock();
    const client = createClient({
      url: `http://127.0.0.1:${port}`,
      email: EMAIL,
      apiKey: API_KEY,
      clock,
      rateLimit: false,
    });
    const err = await client.messages.send(sendParams).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    const network = err as NetworkError;
    expect(network.code).toBe("NETWORK_ERROR");
    expect(network.requestSent).toBe(false);
    expect(network.cause).toMatchObject({ code: "ECONNREFUSED" });
    expect(network.message).toBe(
      `POST /messages: could not reach the server at http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}. ` +
        "Check the server URL, the network and that the server is up.",
    );
    expect(clock.sleeps).toHaveLength(3);
  });

  test("a call with no response within its timeout is a NetworkError that says so", async ({
    server,
    makeClient,
  }) => {
    server.reply({ hang: true });
    const err = await makeClient({ retry: false })
      .users.me({ timeoutMs: 150 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).timedOut).toBe(true);
    expect((err as Error).message).toContain("GET /users/me: could not reach the server at");
    expect((err as Error).message).toContain("no response within 0.15 s (UND_ERR_HEADERS_TIMEOUT)");
  });
});

describe("abort signals", () => {
  test("abort cancels a parked long-poll", async ({ server, makeClient }) => {
    server.reply({ hang: true });
    const controller = new AbortController();
    const pending = makeClient().events.get(
      { queue_id: "q1", last_event_id: -1 },
      { signal: controller.signal },
    );
    await expect.poll(() => server.requests.length).toBe(1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(server.requests).toHaveLength(1);
  });

  test("abort cancels a wait for retry-after, and no retry is sent", async ({ server }) => {
    const clock = new ManualClock(1_700_000_000_000);
    const client = createClient({ url: server.url, email: EMAIL, apiKey: API_KEY, clock, rateLimit: false });
    server.reply(rateLimited(30));
    const controller = new AbortController();
    const pending = client.messages.send(sendParams, { signal: controller.signal });
    await expect.poll(() => clock.pendingTimers).toBe(1);
    expect((clock.nextDueAt() ?? 0) - clock.now()).toBe(30_000);
    controller.abort(new Error("shutting down"));
    await expect(pending).rejects.toThrow("shutting down");
    expect(clock.pendingTimers).toBe(0);
    await clock.tick(60_000);
    expect(server.requests).toHaveLength(1);
  });

  test("an already aborted signal sends nothing", async ({ server, makeClient }) => {
    await expect(makeClient().users.me({ signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(server.requests).toHaveLength(0);
  });
});

describe("retry settings", () => {
  test("a setting given as undefined keeps its default: a failing GET is tried 4 times, not forever", async ({
    server,
    makeClient,
  }) => {
    server.fallback = failure(500, { msg: "Internal server error" });
    const unset: { attempts?: number } = {};
    const err = await makeClient({ retry: { maxAttempts: unset.attempts } })
      .users.me()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "HTTP_500" });
    expect(server.requests).toHaveLength(4);
  });

  test("a setting of the wrong type or range is refused when the client is made, or at the call", async ({
    server,
    makeClient,
  }) => {
    expect(() => makeClient({ retry: { maxAttempts: 0 } })).toThrow(
      "option `retry.maxAttempts` must be a whole number, 1 or more, got 0.",
    );
    expect(() => makeClient({ retry: { baseDelayMs: "5s" as never } })).toThrow(
      'option `retry.baseDelayMs` must be a number of milliseconds, 0 or more, got the string "5s".',
    );
    expect(() => makeClient({ retry: { maxAttempt: 2 } as never })).toThrow(
      "option `retry.maxAttempt` is not a retry setting: the settings are maxAttempts, baseDelayMs, maxDelayMs, maxRateLimitWaitMs, random.",
    );
    await expect(makeClient().users.me({ retry: { maxAttempts: Number.NaN } })).rejects.toMatchObject({
      code: "CLIENT_CONFIG_INVALID",
    });
    expect(server.requests).toHaveLength(0);
  });
});
