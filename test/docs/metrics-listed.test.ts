/**
 * docs/operations/health-and-metrics.md against a running daemon's /metrics (over HTTP, the
 * sandbox its server): every metric of its table is served with the type and labels it gives,
 * every bothost metric served is in the table, the label values it names for a bot are series from
 * the bot's start (at 0 before their first count, for an alert's increase()), and every series its
 * example alerts query is one of them.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { repoRoot } from "../support/cli.ts";
import { type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { type Family, parsePrometheus } from "../support/prometheus-text.ts";

const BOT = "counted-bot@sandbox.example";
let sandbox: Sandbox;
let running: RunningDaemon;
let doc: string;

beforeAll(async () => {
  doc = await readFile(path.join(repoRoot, "docs/operations/health-and-metrics.md"), "utf8");
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: BOT,
    full_name: "Counted",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
  const definition = {
    setup: (b: BotApi) => b.on("message", (ctx) => ctx.reply("seen")),
  } as unknown as BotDefinition<never, never>;
  running = await startDaemon(sandbox, { counted: { email: BOT, definition } });
});

afterAll(async () => {
  await running?.stop();
  await sandbox?.stop();
});

async function scrape(): Promise<Map<string, Family>> {
  return parsePrometheus(await (await fetch(`${running.url}/metrics`)).text());
}

/** The rows of the doc's table: name, type, label names, and the row's text. */
function rows(): { name: string; type: string; labels: string[]; text: string }[] {
  return [...doc.matchAll(/^\| `(bothost_\w+)` \| (\w+) \| ([^|]*) \|.*$/gm)].map((m) => ({
    name: m[1]!,
    type: m[2]!,
    labels: [...m[3]!.matchAll(/`(\w+)`/g)].map((l) => l[1]!).sort(),
    text: m[0],
  }));
}

it("serves every metric of the table with its type and labels, and no bothost metric it lacks", async () => {
  // A message handled (its type's series), a webhook request (the route's).
  sandbox.control.sendAs("member@sandbox.example", { type: "direct", to: [BOT], content: "hi" });
  await sandbox.control.waitFor(() => sandbox.control.messages().find((m) => m.content === "seen"));
  await (await fetch(`${running.url}/webhooks/counted/none`, { method: "POST", body: "{}" })).body?.cancel();
  const served = await scrape();
  const listed = rows();
  expect(listed.length).toBeGreaterThan(30);
  for (const row of listed) {
    const family = served.get(row.name);
    expect(family?.type, row.name).toBe(row.type);
    // Redis's metrics have series only with state.redis (its replica waits with Sentinel replicas).
    if (row.name.startsWith("bothost_redis_")) continue;
    const names = new Set(family!.samples.flatMap((s) => Object.keys(s.labels)).filter((l) => l !== "le"));
    expect([...names].sort(), row.name).toEqual(row.labels);
  }
  const bothost = [...served.keys()].filter((name) => name.startsWith("bothost_"));
  expect(bothost.filter((name) => !listed.some((r) => r.name === name))).toEqual([]);
});

it("has each label value the table names for a bot as a series from its start", async () => {
  const fresh = await scrape();
  const values: [metric: string, label: string, values: string[]][] = [
    [
      "bothost_queue_registrations_total",
      "reason",
      ["start", "queue_expired", "ack_rejected", "watchdog", "event_types"],
    ],
    ["bothost_send_verifications_total", "outcome", ["echo", "found", "absent"]],
    ["bothost_announcements_total", "outcome", ["booked", "delivered", "failed"]],
    ["bothost_cron_jobs_total", "outcome", ["run", "error", "skipped"]],
    ["bothost_state_store_write_failures_total", "code", ["STATE_UNAVAILABLE", "STATE_IO"]],
    ["bothost_api_budget_calls_total", "bucket", ["events", "other"]],
  ];
  for (const [metric, label, named] of values) {
    const row = rows().find((r) => r.name === metric)!;
    for (const value of named) {
      expect(row.text, `${metric} names ${value}`).toContain(`\`${value}\``);
      const series = fresh
        .get(metric)!
        .samples.find((s) => s.labels.bot === "counted" && s.labels[label] === value);
      expect(series, `${metric}{${label}="${value}"}`).toBeDefined();
    }
  }
});

it("queries only served series in its example alerts", async () => {
  const served = await scrape();
  const alerts = [...doc.matchAll(/`([a-z_]+\((bothost_\w+)\[\w+\]\)[^`]*)`/g)];
  expect(alerts.length).toBeGreaterThanOrEqual(3);
  for (const [, expr, name] of alerts) expect(served.get(name!)?.samples.length, expr).toBeGreaterThan(0);
});
