/**
 * /healthz, /readyz and /metrics of a running daemon against the sandbox: readiness follows the
 * event queues, and the metrics parse as Prometheus text and move as the bots work.
 */
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { parsePrometheus, sampleValue } from "../support/prometheus-text.ts";

const MEMBER = "member@sandbox.example";
let sandbox: Sandbox;
let running: RunningDaemon;

const bot = (setup: (b: BotApi) => void) => ({ setup }) as unknown as BotDefinition<never, never>;

beforeAll(async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  for (const [email, name] of [
    ["echo-bot@sandbox.example", "Echo"],
    ["broken-bot@sandbox.example", "Broken"],
    ["announce-bot@sandbox.example", "Announcer"],
  ] as const) {
    sandbox.control.createUser({
      email,
      full_name: name,
      bot: "generic",
      owner: "owner@sandbox.example",
      channels: ["general"],
    });
  }
  running = await startDaemon(sandbox, {
    announcer: {
      email: "announce-bot@sandbox.example",
      definition: bot((b) =>
        b.recurring("standup", {
          cron: "0 9 * * 1-5",
          timezone: "UTC",
          to: "general",
          topic: "standup",
          content: "Standup!",
        }),
      ),
    },
    echo: {
      email: "echo-bot@sandbox.example",
      definition: bot((b) =>
        b.on("message", { channel: "general", sender: MEMBER }, (ctx) =>
          ctx.reply(`seen ${ctx.event.message.id}`),
        ),
      ),
    },
    broken: {
      email: "broken-bot@sandbox.example",
      definition: bot((b) =>
        b.on("message", { channel: "general", sender: MEMBER }, () => {
          throw new Error("this handler always fails");
        }),
      ),
    },
  });
});

afterAll(async () => {
  await running.stop();
  await sandbox.stop();
});

async function get(path: string) {
  const res = await request(`${running.url}${path}`);
  return { status: res.statusCode, type: String(res.headers["content-type"]), text: await res.body.text() };
}

async function scrape() {
  const res = await get("/metrics");
  expect(res.status).toBe(200);
  expect(res.type).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheus(res.text);
}

describe("health endpoints", () => {
  it("/healthz answers while the process runs", async () => {
    const res = await get("/healthz");
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: "ok" });
  });

  it("/readyz is 503 naming the bot and the reason while its queue fails, and 200 again after", async () => {
    await expect.poll(async () => (await get("/readyz")).status).toBe(200);
    const ready = JSON.parse((await get("/readyz")).text);
    expect(ready.ready).toBe(true);
    expect(ready.bots.map((b: { bot: string; ready: boolean }) => [b.bot, b.ready])).toEqual([
      ["announcer", true],
      ["echo", true],
      ["broken", true],
    ]);
    // /metrics says the same per bot, for an alert on bothost_bot_ready == 0.
    const readyGauge = (parsed: Awaited<ReturnType<typeof scrape>>) =>
      parsed.get("bothost_bot_ready")?.samples.map((x) => [x.labels.bot, x.value]);
    expect(readyGauge(await scrape())).toEqual([
      ["announcer", 1],
      ["echo", 1],
      ["broken", 1],
    ]);
    sandbox.control.failNext(12, { status: 503, paths: ["/events"] });
    await expect.poll(async () => (await get("/readyz")).status, { timeout: 10_000, interval: 20 }).toBe(503);
    const down = JSON.parse((await get("/readyz")).text);
    const anyDown = async () => readyGauge(await scrape())?.some(([, value]) => value === 0);
    await expect.poll(anyDown, { timeout: 10_000, interval: 20 }).toBe(true);
    // The body names each bot; any that is down says why.
    for (const b of down.bots.filter((x: { ready: boolean }) => !x.ready)) {
      expect(b).toMatchObject({
        ready: false,
        state: "backing_off",
        reason: "the event queue failed; retrying with backoff",
      });
    }
    await expect.poll(async () => (await get("/readyz")).status, { timeout: 15_000, interval: 50 }).toBe(200);
    await expect.poll(anyDown, { timeout: 5_000 }).toBe(false);
  });
});

describe("/metrics", () => {
  it("parses as Prometheus text and its counters move as the bots work", async () => {
    const before = await scrape();
    expect([...before.keys()]).toEqual(
      expect.arrayContaining([
        "bothost_events_received_total",
        "bothost_events_handled_total",
        "bothost_events_failed_total",
        "bothost_handler_duration_seconds",
        "bothost_queue_registrations_total",
        "bothost_replayed_messages_total",
        "bothost_gaps_total",
        "bothost_api_calls_total",
        "bothost_rate_limit_waits_total",
        "bothost_api_budget_calls_total",
        "bothost_api_budget_remaining_hour",
        "bothost_poll_spacing_seconds",
        "bothost_announcements_total",
        "bothost_webhook_requests_total",
      ]),
    );
    expect(sampleValue(before, "bothost_queue_registrations_total", { bot: "echo", reason: "start" })).toBe(
      1,
    );
    const echo = { bot: "echo", type: "message" };
    const broken = { bot: "broken", type: "message" };
    const sent = { bot: "echo", endpoint: "POST /messages", status: "200" };
    const id = sandbox.control.sendAs(MEMBER, {
      type: "stream",
      to: "general",
      topic: "m",
      content: "count me",
    }).id;
    await sandbox.control.waitFor(() => sandbox.control.messages().find((m) => m.content === `seen ${id}`));
    await expect
      .poll(async () => sampleValue(await scrape(), "bothost_events_failed_total", broken))
      .toBe(sampleValue(before, "bothost_events_failed_total", broken) + 1);
    await expect
      .poll(async () => sampleValue(await scrape(), "bothost_events_handled_total", echo))
      .toBe(sampleValue(before, "bothost_events_handled_total", echo) + 1);
    const after = await scrape();
    expect(sampleValue(after, "bothost_events_received_total", echo)).toBeGreaterThan(
      sampleValue(before, "bothost_events_received_total", echo),
    );
    expect(sampleValue(after, "bothost_handler_duration_seconds_count", echo)).toBe(
      sampleValue(before, "bothost_handler_duration_seconds_count", echo) + 1,
    );
    expect(sampleValue(after, "bothost_api_calls_total", sent)).toBe(
      sampleValue(before, "bothost_api_calls_total", sent) + 1,
    );
    expect(sampleValue(after, "bothost_events_failed_total", broken)).toBe(
      sampleValue(before, "bothost_events_failed_total", broken) + 1,
    );
    // The reply counted in the `other` budget, its polls in `events`; light traffic: no spacing.
    const other = { bot: "echo", bucket: "other" };
    expect(sampleValue(after, "bothost_api_budget_calls_total", other)).toBeGreaterThanOrEqual(
      sampleValue(before, "bothost_api_budget_calls_total", other) + 1,
    );
    expect(
      sampleValue(after, "bothost_api_budget_calls_total", { bot: "echo", bucket: "events" }),
    ).toBeGreaterThan(0);
    expect(sampleValue(after, "bothost_api_budget_remaining_hour", other)).toBe(
      2000 - sampleValue(after, "bothost_api_budget_used_hour", other),
    );
    expect(sampleValue(after, "bothost_poll_spacing_seconds", { bot: "echo" })).toBe(0);
  });

  it("reads recurring announcements and cron runs from the schedulers", async () => {
    await expect
      .poll(async () =>
        sampleValue(await scrape(), "bothost_announcements_total", { bot: "announcer", outcome: "booked" }),
      )
      .toBe(1);
    const now = await scrape();
    expect(sampleValue(now, "bothost_announcements_total", { bot: "announcer", outcome: "delivered" })).toBe(
      0,
    );
    expect(now.get("bothost_cron_jobs_total")!.samples.map((s) => s.labels.outcome)).toContain("run");
  });

  it("has each bot's store write failures at 0 before the first, for both codes", async () => {
    const family = (await scrape()).get("bothost_state_store_write_failures_total")!;
    for (const code of ["STATE_UNAVAILABLE", "STATE_IO"]) {
      expect(family.samples).toContainEqual({
        name: "bothost_state_store_write_failures_total",
        labels: { bot: "echo", code },
        value: 0,
      });
    }
  });

  it("names in its help each reason a queue registration is counted under, each a series from the start", async () => {
    const { help, samples } = (await scrape()).get("bothost_queue_registrations_total")!;
    for (const reason of ["start", "queue_expired", "ack_rejected", "watchdog", "event_types"]) {
      expect(help).toContain(reason);
      // There before its first count (at 0 but `start`), for an alert's increase() to see that one.
      expect(samples.find((x) => x.labels.bot === "echo" && x.labels.reason === reason)?.value, reason).toBe(
        reason === "start" ? 1 : 0,
      );
    }
  });

  it("counts webhook requests by route and status", async () => {
    const labels = { route: "/webhooks/(unknown)", status: "404" };
    const before = sampleValue(await scrape(), "bothost_webhook_requests_total", labels);
    const res = await request(`${running.url}/webhooks/echo/none`, { method: "POST", body: "{}" });
    expect(res.statusCode).toBe(404);
    await res.body.dump();
    await expect
      .poll(async () => sampleValue(await scrape(), "bothost_webhook_requests_total", labels))
      .toBe(before + 1);
  });

  it("counts the queue's 503s as API calls by status", async () => {
    const failed = sampleValue(await scrape(), "bothost_api_calls_total", {
      endpoint: "GET /events",
      status: "503",
    });
    expect(failed).toBeGreaterThan(0);
  });
});
