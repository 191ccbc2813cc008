/**
 * A cron job's runs in /metrics, under `type="cron_job"`: its series are there at 0 from its first
 * run (so an alert's increase() sees its first failure), each attempt that throws counts in
 * bothost_events_failed_total, a run that succeeds in bothost_events_handled_total, and an
 * occurrence kept as a dead letter in bothost_events_failed_for_good_total as in
 * bothost_dead_letters_total.
 */
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { deferred } from "../support/deferred.ts";
import { type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { parsePrometheus } from "../support/prometheus-text.ts";

const BOT = "digest-bot@sandbox.example";
let sandbox: Sandbox | undefined;
let running: RunningDaemon | undefined;
/** Holds a job's first run open (released at the end, so that the stop finds none under way). */
let gate = deferred();

afterEach(async () => {
  gate.resolve();
  gate = deferred();
  await running?.stop();
  await sandbox?.stop();
  running = undefined;
  sandbox = undefined;
});

/** A daemon whose one bot has the job `job`, every five minutes, on a held clock at 07:04 UTC. */
async function start(job: () => Promise<void>) {
  const clock = new ManualClock(Date.parse("2026-03-02T07:04:00Z"));
  sandbox = await startSandbox();
  sandbox.control.createUser({
    email: BOT,
    full_name: "Digest",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
  const definition = {
    setup: (b: BotApi) => b.cron("*/5 * * * *", { id: "sync" }, job),
  } as unknown as BotDefinition<never, never>;
  running = await startDaemon(
    sandbox,
    { digest: { email: BOT, definition, extra: "retries: { attempts: 2, backoff: 1s, max_backoff: 1s }" } },
    { clock },
  );
  return clock;
}

/** The `type="cron_job"` samples of the bot's per-type counters, by metric name. */
async function cronJobCounts(): Promise<Record<string, number>> {
  const res = await request(`${running!.url}/metrics`);
  const families = parsePrometheus(await res.body.text());
  const out: Record<string, number> = {};
  for (const [name, family] of families)
    for (const s of family.samples)
      if (s.labels.type === "cron_job" && s.labels.bot === "digest" && name.endsWith("_total"))
        out[name] = s.value;
  return out;
}

it("counts a job's failed attempts, its dead letter and its failure for good, from series at 0 at its first run", async () => {
  let runs = 0;
  const clock = await start(async () => {
    runs++;
    if (runs === 1) await gate.promise;
    throw new Error("upstream down");
  });
  expect(await cronJobCounts()).toEqual({});

  await clock.tickTo(Date.parse("2026-03-02T07:05:00Z"));
  await expect.poll(() => runs).toBe(1);
  // Under way: every series of the type is there, at 0.
  expect(await cronJobCounts()).toEqual({
    bothost_events_received_total: 0,
    bothost_events_handled_total: 0,
    bothost_events_failed_total: 0,
    bothost_events_failed_for_good_total: 0,
    bothost_events_store_outage_total: 0,
    bothost_handler_retries_total: 0,
    bothost_dead_letters_total: 0,
  });

  gate.resolve();
  await expect.poll(async () => (await cronJobCounts()).bothost_events_failed_total).toBe(1);
  await clock.tick(1_000);
  await expect.poll(async () => (await cronJobCounts()).bothost_dead_letters_total).toBe(1);
  expect(await cronJobCounts()).toMatchObject({
    bothost_events_handled_total: 0,
    bothost_events_failed_total: 2,
    bothost_events_failed_for_good_total: 1,
    bothost_handler_retries_total: 1,
  });
});

it("counts a job's run that succeeds as handled", async () => {
  let runs = 0;
  const clock = await start(async () => {
    runs++;
  });
  await clock.tickTo(Date.parse("2026-03-02T07:05:00Z"));
  await expect.poll(async () => (await cronJobCounts()).bothost_events_handled_total).toBe(1);
  expect(runs).toBe(1);
  expect(await cronJobCounts()).toMatchObject({
    bothost_events_failed_total: 0,
    bothost_dead_letters_total: 0,
  });
});
