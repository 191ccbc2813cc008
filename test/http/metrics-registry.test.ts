import { describe, expect, it } from "vitest";
import { endpointPattern } from "../../src/http/bothost-metrics.ts";
import { MetricsRegistry } from "../../src/http/metrics-registry.ts";
import { parsePrometheus, sampleValue } from "./prometheus-text.ts";

describe("MetricsRegistry", () => {
  it("renders counters, gauges and histograms in the text format", () => {
    const r = new MetricsRegistry();
    const c = r.counter("things_total", "Things.\nTwo lines.", ["bot"]);
    c.inc({ bot: 'say "hi"\\' });
    c.inc({ bot: "b" }, 2.5);
    const g = r.gauge("up", "Up.", ["bot"]);
    g.collect = () => g.set({ bot: "b" }, 1);
    const h = r.histogram("dur_seconds", "Durations.", ["bot"], [0.1, 1]);
    h.observe({ bot: "b" }, 0.05);
    h.observe({ bot: "b" }, 0.5);
    h.observe({ bot: "b" }, 3);
    expect(r.render()).toMatchInlineSnapshot(`
      "# HELP things_total Things.\\nTwo lines.
      # TYPE things_total counter
      things_total{bot="say \\"hi\\"\\\\"} 1
      things_total{bot="b"} 2.5
      # HELP up Up.
      # TYPE up gauge
      up{bot="b"} 1
      # HELP dur_seconds Durations.
      # TYPE dur_seconds histogram
      dur_seconds_bucket{bot="b",le="0.1"} 1
      dur_seconds_bucket{bot="b",le="1"} 2
      dur_seconds_bucket{bot="b",le="+Inf"} 3
      dur_seconds_sum{bot="b"} 3.55
      dur_seconds_count{bot="b"} 3
      "
    `);
    const parsed = parsePrometheus(r.render());
    expect(sampleValue(parsed, "things_total", { bot: 'say "hi"\\' })).toBe(1);
    expect(sampleValue(parsed, "dur_seconds_count", { bot: "b" })).toBe(3);
  });

  it("counts through a bound series into the same series as inc and observe", () => {
    const r = new MetricsRegistry();
    const c = r.counter("events_total", "Events.", ["bot", "type"]);
    const h = r.histogram("handler_seconds", "Durations.", ["bot", "type"], [0.1, 1]);
    const bound = c.bind({ bot: "b", type: "message" });
    const boundH = h.bind({ bot: "b", type: "message" });
    bound.inc();
    c.inc({ bot: "b", type: "message" });
    bound.inc(2);
    boundH.observe(0.05);
    h.observe({ bot: "b", type: "message" }, 2);
    const parsed = parsePrometheus(r.render());
    expect(sampleValue(parsed, "events_total", { bot: "b", type: "message" })).toBe(4);
    expect(sampleValue(parsed, "handler_seconds_bucket", { bot: "b", type: "message", le: "0.1" })).toBe(1);
    expect(sampleValue(parsed, "handler_seconds_count", { bot: "b", type: "message" })).toBe(2);
    expect(() => bound.inc(-1)).toThrow(/cannot decrease/);
  });

  it("refuses bad names, missing labels, decreasing counters and kind clashes", () => {
    const r = new MetricsRegistry();
    expect(() => r.counter("bad-name", "x")).toThrow('metric name "bad-name" is not valid');
    expect(() => r.histogram("h", "x", ["le"])).toThrow('metric h: label "le" is not valid');
    const c = r.counter("c_total", "x", ["bot"]);
    expect(() => c.inc({})).toThrow('metric c_total: label "bot" is missing');
    expect(() => c.inc({ bot: "a" }, -1)).toThrow("counter c_total: cannot decrease (inc by -1)");
    expect(r.counter("c_total", "x", ["bot"])).toBe(c);
    expect(() => r.gauge("c_total", "x")).toThrow("metric c_total exists already as a counter");
  });

  it("maps endpoints with ids or emails to one pattern", () => {
    expect(endpointPattern("GET /messages/42/reactions")).toBe("GET /messages/{id}/reactions");
    expect(endpointPattern("GET /users/a%40b.example")).toBe("GET /users/{email}");
    expect(endpointPattern("POST /messages")).toBe("POST /messages");
  });
});
