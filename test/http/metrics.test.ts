import { describe, expect, it } from "vitest";
import { BothostMetrics, endpointPattern } from "../../src/http/bothost-metrics.ts";
import { type Family, parsePrometheus, sampleValue } from "../support/prometheus-text.ts";

describe("BothostMetrics", () => {
  it("serves Node's process metrics beside bothost's, in the Prometheus text format", async () => {
    const metrics = new BothostMetrics();
    const text = await metrics.registry.metrics();
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
      "nodejs_active_handles_total",
      "bothost_events_received_total",
    ]) {
      expect(text, name).toContain(`# TYPE ${name} `);
    }
    expect(metrics.registry.contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
  });

  it("a runtime's sink counts per bot and type, retries and dead letters included", async () => {
    const metrics = new BothostMetrics();
    const sink = metrics.runtimeSink("mod");
    sink.eventReceived("message");
    sink.eventReceived("message");
    sink.eventFailed("message", 0.2);
    sink.handlerRetried("message");
    sink.eventHandled("message", 0.1);
    sink.deadLettered("reaction");
    sink.sendVerified("found");
    const parsed = parsePrometheus(await metrics.registry.metrics());
    const m = { bot: "mod", type: "message" };
    expect(sampleValue(parsed, "bothost_events_received_total", m)).toBe(2);
    expect(sampleValue(parsed, "bothost_events_failed_total", m)).toBe(1);
    expect(sampleValue(parsed, "bothost_handler_retries_total", m)).toBe(1);
    expect(sampleValue(parsed, "bothost_handler_duration_seconds_count", m)).toBe(2);
    expect(sampleValue(parsed, "bothost_dead_letters_total", { bot: "mod", type: "reaction" })).toBe(1);
    expect(sampleValue(parsed, "bothost_send_verifications_total", { bot: "mod", outcome: "found" })).toBe(1);
  });

  it("series are there at 0 before their first count, for an alert's increase() to see it", async () => {
    // The sample itself, not sampleValue's 0 for a series that is not there.
    const sample = (parsed: Map<string, Family>, name: string, labels: Record<string, string>) =>
      parsed.get(name)?.samples.find((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v))
        ?.value;
    const metrics = new BothostMetrics();
    const sink = metrics.runtimeSink("mod");
    metrics.apiSink("mod");
    let parsed = parsePrometheus(await metrics.registry.metrics());
    const bot = { bot: "mod" };
    for (const name of [
      "bothost_gaps_total",
      "bothost_replayed_messages_total",
      "bothost_rate_limit_waits_total",
    ])
      expect(sample(parsed, name, bot), name).toBe(0);
    expect(sample(parsed, "bothost_send_verifications_total", { ...bot, outcome: "absent" })).toBe(0);
    // A type's counters come with its first event, each at 0 but the one counted.
    sink.eventReceived("message");
    parsed = parsePrometheus(await metrics.registry.metrics());
    const m = { ...bot, type: "message" };
    expect(sample(parsed, "bothost_events_received_total", m)).toBe(1);
    for (const name of [
      "bothost_dead_letters_total",
      "bothost_events_failed_total",
      "bothost_handler_retries_total",
    ])
      expect(sample(parsed, name, m), name).toBe(0);
  });

  it("api calls count by endpoint pattern; scheduler totals are read at each scrape", async () => {
    const metrics = new BothostMetrics();
    const api = metrics.apiSink("mod");
    api.onResponse({ endpoint: "GET /messages/41/reactions", status: 200, ms: 3 });
    api.onResponse({ endpoint: "GET /messages/42/reactions", status: 200, ms: 3 });
    let delivered = 1;
    metrics.readSchedulerStats(() => [
      { bot: "mod", stats: { booked: 2, delivered, failed: 0, jobRuns: 5, jobErrors: 1, jobsSkipped: 0 } },
    ]);
    let parsed = parsePrometheus(await metrics.registry.metrics());
    expect(
      sampleValue(parsed, "bothost_api_calls_total", {
        bot: "mod",
        endpoint: "GET /messages/{id}/reactions",
        status: "200",
      }),
    ).toBe(2);
    expect(sampleValue(parsed, "bothost_announcements_total", { bot: "mod", outcome: "delivered" })).toBe(1);
    delivered = 3;
    parsed = parsePrometheus(await metrics.registry.metrics());
    expect(sampleValue(parsed, "bothost_announcements_total", { bot: "mod", outcome: "delivered" })).toBe(3);
    expect(sampleValue(parsed, "bothost_cron_jobs_total", { bot: "mod", outcome: "error" })).toBe(1);
  });

  it("maps endpoints with ids or emails to one pattern", () => {
    expect(endpointPattern("GET /messages/42/reactions")).toBe("GET /messages/{id}/reactions");
    expect(endpointPattern("GET /users/a%40b.example")).toBe("GET /users/{email}");
    expect(endpointPattern("POST /messages")).toBe("POST /messages");
  });
});
