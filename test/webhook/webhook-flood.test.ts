/**
 * A flood of inbound webhook requests to the shipped webhook-relay bot is bounded: a request that
 * would wait for the account's spent call budget, or that finds the bot's inbound handlers all
 * taken, is answered 503 with `Retry-After` at once instead of holding its connection while its
 * send waits its turn. The daemon in this process against the sandbox over HTTP (its rate limits
 * on), on a held test clock: the budget's pacing moves only where the test moves the clock. An
 * admitted request's `handler_timeout` counts its budget waits (its sender is waiting).
 */
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import relay from "../../bots/webhook-relay.ts";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { WEBHOOK_RUNS_PER_BOT } from "../../src/webhook/budget-room.ts";
import { startDaemon } from "../support/http-daemon.ts";

const BOT = "relay-bot@sandbox.example";
/** Stops the daemon and the sandbox the case started. */
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** The relay bot, with a webhook `count` whose handler makes no server call: it keeps a count in state. */
const withCounter = {
  ...relay,
  setup(bot: BotApi, ...rest: unknown[]) {
    (relay.setup as (...a: unknown[]) => unknown)(bot, ...rest);
    bot.webhook("count", { verify: { type: "none" } }, async (ctx) => {
      const count = ((await ctx.state.get<number>("count")) ?? 0) + 1;
      await ctx.state.set("count", count);
      return { count };
    });
    // Catches the failure of its refused send and returns normally.
    bot.webhook("careful", { verify: { type: "none" } }, async (ctx) => {
      try {
        await ctx.send({ type: "channel", to: "general", topic: "alerts", content: "careful" });
      } catch {
        // The refusal's abort: answered all the same.
      }
      await ctx.state.set("careful", true);
      return { caught: true };
    });
    bot.webhook("peek", { verify: { type: "none" } }, async (ctx) => ({
      careful: (await ctx.state.get<boolean>("careful")) ?? false,
    }));
    // Reports the message whose id the body's text gives.
    bot.webhook("report", { verify: { type: "none" } }, async (ctx) => ({
      result: await ctx.report(Number((ctx.request.body as { text: string }).text), "spam"),
    }));
  },
} as unknown as BotDefinition<never, never>;

async function start(clock: TestClock, perMinute: number, handlerTimeout = "30s", more: string[] = []) {
  const sandbox = await startSandbox({ clock });
  cleanup = () => sandbox.stop();
  sandbox.control.createUser({
    email: BOT,
    full_name: "Relay",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  sandbox.control.setUserRateLimit(BOT, [
    [60, perMinute],
    [3600, 2000],
  ]);
  const running = await startDaemon(
    sandbox,
    {
      relay: {
        email: BOT,
        definition: withCounter,
        extra: [
          `handler_timeout: ${handlerTimeout}`,
          `rate_limit: { per_minute: ${perMinute}, per_hour: 2000 }`,
          "settings:",
          "  webhook: alerts",
          "  verify: { type: none }",
          "  channel: general",
          "  topic: alerts",
          '  content: "{{body.text}}"',
          ...more,
        ].join("\n"),
      },
    },
    { clock },
  );
  cleanup = async () => {
    await running.stop();
    await sandbox.stop();
  };
  return {
    sandbox,
    url: `${running.url}/webhooks/relay/alerts`,
    counter: `${running.url}/webhooks/relay/count`,
    careful: `${running.url}/webhooks/relay/careful`,
    report: `${running.url}/webhooks/relay/report`,
    logs: running.logs,
  };
}

async function deliver(url: string, text: string) {
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  return { status: res.statusCode, retryAfter: res.headers["retry-after"], body: await res.body.json() };
}

/** `answer`, the held clock moved by `stepMs` at a time (at most 120 steps) until it comes. */
async function movingClock<T>(clock: TestClock, stepMs: number, answer: Promise<T>): Promise<T> {
  let answered = false;
  void answer.then(() => {
    answered = true;
  });
  for (let s = 0; s < 120 && !answered; s++) {
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(stepMs);
  }
  return answer;
}

it("a request that would wait for the spent budget is answered 503 with Retry-After, not held", async () => {
  const clock = new TestClock({ held: true });
  const { url, counter } = await start(clock, 5);
  // The start's calls have left the minute's window.
  await clock.advance(61_000);
  const sent: number[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await deliver(url, `alert ${i}`);
    if (res.status !== 200) break;
    sent.push(i);
  }
  // The minute's calls are spent: the next send would wait most of a minute.
  const res = await movingClock(clock, 1_000, deliver(url, "one too many"));
  expect(sent.length).toBeGreaterThan(0);
  expect(res.status).toBe(503);
  expect(Number(res.retryAfter)).toBeGreaterThan(10);
  expect(res.body).toEqual({
    error: expect.stringContaining("bot relay's account is at its rate limit for calls to the chat server"),
  });
  // A handler that makes no call to the chat server runs all the same: its state kept, its answer given.
  expect((await deliver(counter, "")).body).toEqual({ count: 1 });
  expect(await deliver(counter, "")).toMatchObject({ status: 200, body: { count: 2 } });
  // Once the window frees up, the sender's retry is relayed.
  await clock.advance(61_000);
  expect((await deliver(url, "one too many")).status).toBe(200);
});

it(`a request finding ${WEBHOOK_RUNS_PER_BOT} of the bot's handlers running is answered 503 at once`, async () => {
  const clock = new TestClock({ held: true });
  const { sandbox: sb, url, logs } = await start(clock, 200);
  // Every send is held by the server: the handlers stay under way.
  sb.control.delay(3_600_000, { paths: [/^\/messages$/] });
  const held = Array.from({ length: WEBHOOK_RUNS_PER_BOT }, (_, i) => deliver(url, `held ${i}`));
  await sb.control.waitFor(() => sb.control.delayed() === WEBHOOK_RUNS_PER_BOT, { timeoutMs: 10_000 });
  const res = await deliver(url, "one more");
  expect(res.status).toBe(503);
  expect(res.retryAfter).toBe("1");
  expect(res.body).toEqual({
    error: `bot relay is handling ${WEBHOOK_RUNS_PER_BOT} webhook requests already; try again shortly`,
  });
  expect(logs.filter((l) => String(l.msg).startsWith("webhook requests answered 503"))).toMatchObject([
    { level: 40, bot: "relay", refused: 1, crowded: 1, budget: 0 },
  ]);
  sb.control.delay(0);
  expect((await Promise.all(held)).map((r) => r.status)).toEqual(Array(WEBHOOK_RUNS_PER_BOT).fill(200));
});

/** The bot's calls the server saw, but for the event queue's. */
const botCalls = (sb: Sandbox) =>
  sb.control.requests
    .filter((r) => r.email === BOT && r.path !== "/events")
    .map((r) => `${r.method} ${r.path}`);

/**
 * With a budget of 2 calls a minute, the daemon's start makes POST /register and GET /users/me at
 * 0 s, and GET /streams once their minute is over, at 60 s. The first relay, at 61 s, spends the
 * minute with it: a call after them starts at 120 s, 59 s after the relay.
 */
async function firstRelayAt61s(clock: TestClock, sb: Sandbox, url: string) {
  await clock.advance(59_999);
  expect(botCalls(sb)).toEqual(["POST /register", "GET /users/me"]);
  await clock.advance(1_001);
  expect((await deliver(url, "first")).status).toBe(200);
  expect(botCalls(sb)).toEqual(["POST /register", "GET /users/me", "GET /streams", "POST /messages"]);
}

/**
 * A request while the minute frees in `refusedIn` s is refused at once (`Retry-After`), one while
 * it frees in `inTimeIn` s waits for it and is relayed. `more`: YAML for the bot's config entry.
 */
async function refusedThenInTime(more: string[], refusedIn: number, inTimeIn: number) {
  const clock = new TestClock({ held: true });
  const { sandbox: sb, url } = await start(clock, 2, "30s", more);
  await firstRelayAt61s(clock, sb, url);
  await clock.advance(59_000 - refusedIn * 1_000);
  const from = clock.now();
  const refused = await movingClock(clock, 100, deliver(url, "late"));
  expect(refused).toMatchObject({ status: 503, retryAfter: String(refusedIn) });
  // Answered before its send's wait: the held clock moved by a step or so at most.
  expect(clock.now() - from).toBeLessThan(1_000);
  await clock.advance((refusedIn - inTimeIn) * 1_000);
  const held = await movingClock(clock, 100, deliver(url, "in time"));
  expect(held.status).toBe(200);
  expect(sb.control.messages().map((m) => m.content)).toEqual(["first", "in time"]);
}

it("a send whose wait would end less than 2 s before the sender's 10 s is refused at once, not made late", async () => {
  // Freeing in 9 s, a send would leave GitHub 1 s: refused now; in 7 s, it is answered within 10 s.
  await refusedThenInTime([], 9, 7);
});

it("a webhook's sender_timeout sets its deadline, its margin a fifth of it: 3 s lets a call wait 2.4 s", async () => {
  // Freeing in 4 s is in time for GitHub's 10 s, too late for a sender waiting 3 s; freeing in
  // 2 s leaves 1 s of the 3, which a margin of 2 s would refuse.
  await refusedThenInTime(["webhooks:", "  alerts: { sender_timeout: 3s }"], 4, 2);
});

it("a send whose wait would outlast the handler_timeout is refused at once, not timed out", async () => {
  const clock = new TestClock({ held: true });
  const { sandbox: sb, url } = await start(clock, 2, "2s");
  await firstRelayAt61s(clock, sb, url);
  // A send would wait 5 s, past the 2 s timeout: 503 with Retry-After, not a 500 at the timeout.
  await clock.advance(54_000);
  const from = clock.now();
  const answer = await movingClock(clock, 100, deliver(url, "second"));
  expect(answer).toMatchObject({ status: 503, retryAfter: "5" });
  // Answered before its send's wait: the held clock moved by a step or so at most.
  expect(clock.now() - from).toBeLessThan(1_000);
  expect(sb.control.messages().map((m) => m.content)).toEqual(["first"]);
});

it("a refused run is answered 503 even when its handler catches the abort and returns normally", async () => {
  const clock = new TestClock({ held: true });
  const { url, careful } = await start(clock, 2);
  await clock.advance(61_000);
  expect((await deliver(url, "first")).status).toBe(200);
  const res = await movingClock(clock, 1_000, deliver(careful, ""));
  expect(res.status).toBe(503);
  expect(Number(res.retryAfter)).toBeGreaterThan(10);
  // Its state write after the abort does not apply.
  expect((await deliver(careful.replace("careful", "peek"), "")).body).toEqual({ careful: false });
});

it("refusals are said at warn: the first at once, then one line a minute per bot with their count", async () => {
  const clock = new TestClock({ held: true });
  const { url, logs } = await start(clock, 2);
  await clock.advance(61_000);
  expect((await deliver(url, "first")).status).toBe(200);
  const said = () =>
    logs
      .filter((l) => String(l.msg).startsWith("webhook requests answered 503 for want of room"))
      .map((l) => ({
        level: l.level,
        bot: l.bot,
        refused: l.refused,
        budget: l.budget,
        webhooks: l.webhooks,
      }));
  for (let i = 0; i < 4; i++)
    expect((await movingClock(clock, 100, deliver(url, `no ${i}`))).status).toBe(503);
  expect(said()).toEqual([{ level: 40, bot: "relay", refused: 1, budget: 1, webhooks: ["alerts"] }]);
  // The minute's end says the three refused since; a quiet minute after it says nothing.
  await clock.advance(60_000);
  await clock.advance(60_000);
  expect(said()).toEqual([
    { level: 40, bot: "relay", refused: 1, budget: 1, webhooks: ["alerts"] },
    { level: 40, bot: "relay", refused: 3, budget: 3, webhooks: ["alerts"] },
  ]);
  // The window freed: a send, then the next refusal said at once, and one after it at the stop.
  let status = 200;
  for (let i = 0; i < 5 && status === 200; i++)
    status = (await movingClock(clock, 100, deliver(url, `${i}`))).status;
  expect(status).toBe(503);
  expect((await movingClock(clock, 100, deliver(url, "said at the stop"))).status).toBe(503);
  await cleanup?.();
  cleanup = undefined;
  expect(said().map((l) => l.refused)).toEqual([1, 3, 1, 1]);
});

it("a report with the minute's last call left is made, not refused; one that would wait long is refused at once", async () => {
  const clock = new TestClock({ held: true });
  const { sandbox: sb, report } = await start(clock, 2);
  const spam = (content: string) =>
    sb.control.sendAs("member@sandbox.example", { type: "stream", to: "general", topic: "t", content }).id;
  // The start's GET /streams, at 60 s, is the minute's only call: one is left until 120 s.
  await clock.advance(61_000);
  const first = spam("buy watches");
  expect(await deliver(report, String(first))).toMatchObject({
    status: 200,
    body: { result: { reported: true } },
  });
  // The minute is spent: a report now would wait 59 s, past the 10 s sender's deadline.
  const from = clock.now();
  const refused = await movingClock(clock, 100, deliver(report, String(spam("buy rings"))));
  expect(refused).toMatchObject({ status: 503, retryAfter: "59" });
  expect(clock.now() - from).toBeLessThan(1_000);
  expect(botCalls(sb).filter((c) => c.endsWith("/report"))).toEqual([`POST /messages/${first}/report`]);
});
