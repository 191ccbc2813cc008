/**
 * A state store outage longer than every attempt, for a cron job's occurrence and an outgoing
 * webhook's delivery (store-outage-runs.test.ts has the chat events'): neither is kept as a dead
 * letter (the outage would refuse that write too) nor counted as a handler's failure; each waits
 * for the store like an event does, runs once it is back, and is counted in
 * `bothost_events_store_outage_total`. The waiting occurrence is not run twice: the job's firings
 * meanwhile are skipped. The delivery's HTTP caller gets its answer by the reply deadline, as for
 * any delivery (kept first, as any delivery still running then, where the letters' store takes it). A real daemon in this process against the sandbox over HTTP, on a test clock that
 * stands still between the test's moves (the tries counted are exact);
 * the bot's `ctx.state` writes pass a gate.
 */
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import {
  STORE_OUTAGE_LINE,
  STORE_WAIT_JOB_LINE,
  STORE_WAIT_LINE,
} from "../../src/pipeline/handler-failures.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "tally-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const TOKEN = "T".repeat(32);
const RETRY_LINE = `${STORE_OUTAGE_LINE}; running it again after a pause`;

/** The occurrences the job's handler ran for, one entry a run. */
const runs: string[] = [];

const tally = defineBot({
  setup(bot) {
    // Its write is made at once: the handler passes the store's error on, before it sends.
    bot.cron("* * * * *", { id: "tally" }, async (ctx) => {
      const at = ctx.job.scheduledFor.toISOString();
      runs.push(at);
      await ctx.state.immediate.set("tally", at);
      await ctx.send({ type: "direct", to: [MEMBER], content: `tallied ${at}` });
    });
  },
});

const notes = defineBot({
  setup(bot) {
    bot.on("message", async (ctx) => {
      await ctx.state.immediate.set("note", ctx.event.message.content);
      await ctx.reply("Noted.");
    });
  },
});

let up: GatedDaemon | undefined;
let running: InProcessDaemon | undefined;
let sandbox: Sandbox | undefined;
let clock: TestClock;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
  runs.length = 0;
});

async function start(gate: StoreGate, extra?: string) {
  up = await startGatedDaemon({
    name: "tally",
    email: BOT,
    fullName: "Tally",
    definition: extra ? notes : tally,
    gate,
    gated: "kv",
    global: "http:\n  listen: 127.0.0.1:0",
    ...(extra ? { extra } : {}),
    clock: new TestClock({ held: true }),
  });
  ({ sandbox, running, clock } = up);
  return up.dm;
}

/** `expect.poll` with 15 s of real time: the clock and the gate decide; the bound is for a loaded machine. */
const poll = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 15_000 });

/** A counter's value for the bot's events of `type` (0 when never counted). */
async function counted(name: string, type: string): Promise<number> {
  const metric = running!.daemon.metrics!.registry.getSingleMetric(name) as unknown as {
    get(): Promise<{ values: { labels: Record<string, string>; value: number }[] }>;
  };
  const values = (await metric.get()).values;
  return values.find((v) => v.labels.bot === "tally" && v.labels.type === type)?.value ?? 0;
}

/** Runs every attempt of the default retries (5, after 2, 4, 8 and 16 s), each failing on the outage. */
async function everyAttemptFails(): Promise<void> {
  for (let n = 1; n <= 4; n++) {
    await poll(() => running!.logged(RETRY_LINE).length).toBe(n);
    await clock.advance(2_000 * 2 ** (n - 1));
  }
}

/** Lines at error level or above. */
const errors = () => running!.logged("").filter((l) => (l.level as number) >= 50);

it("a cron job's occurrence outlasting every attempt waits for the store, runs once it is back, and only once", async () => {
  const gate = new StoreGate();
  await start(gate);
  gate.mode = "fail";
  // To the next whole minute: the job fires.
  await clock.advance(60_000 - (clock.now() % 60_000));
  const first = new Date(Math.floor(clock.now() / 60_000) * 60_000).toISOString();
  await everyAttemptFails();
  await poll(() => running!.logged(STORE_WAIT_JOB_LINE).length).toBe(1);
  expect(running!.logged(STORE_WAIT_JOB_LINE)[0]).toMatchObject({
    level: 40,
    attempts: 5,
    job: "tally",
    scheduledFor: first,
  });
  // Still failing: run again after 1 s, 2 s, 4 s… and the job's next minute passes meanwhile.
  let failed = 5 + 4;
  for (const pause of [1_000, 2_000, 4_000, 8_000, 15_000]) {
    await clock.advance(pause);
    await poll(() => running!.logged(STORE_OUTAGE_LINE).length).toBe(++failed);
  }
  await poll(() => running!.logged("cron job still running; skipped").length).toBe(1);
  // Of its tries, the first said at warn; the rest at debug, the outage said once (store-health.ts).
  const tries = running!.logged(STORE_OUTAGE_LINE).filter((l) => l.msg === STORE_OUTAGE_LINE);
  expect(tries.filter((l) => l.level === 40)).toHaveLength(1);
  expect(await running!.daemon.letters.list()).toEqual([]);
  expect(errors()).toEqual([]);
  gate.open();
  await clock.advance(30_000);
  await poll(() => running!.logged("handler succeeded on a later attempt").length).toBe(1);
  expect(await saidAtLeast(sandbox!, BOT, 1)).toEqual([`tallied ${first}`]);
  // The occurrence that waited ran its handler once a try; the next minute's runs once as usual.
  expect(new Set(runs)).toEqual(new Set([first]));
  await clock.advance(60_000 - (clock.now() % 60_000));
  const next = new Date(Math.floor(clock.now() / 60_000) * 60_000).toISOString();
  expect(await saidAtLeast(sandbox!, BOT, 2)).toEqual([`tallied ${first}`, `tallied ${next}`]);
  expect(runs.filter((r) => r === first)).toHaveLength(5 + 5 + 1);
  expect(await running!.daemon.letters.list()).toEqual([]);
  expect(errors()).toEqual([]);
  expect(await counted("bothost_events_store_outage_total", "cron_job")).toBe(5 + 5);
  expect(await counted("bothost_dead_letters_total", "cron_job")).toBe(0);
});

it("a cron job's occurrence waiting for the store, cut off by the stop, is kept for replay: the next start runs it once", async () => {
  const gate = new StoreGate();
  await start(gate);
  const bot = running!.daemon.bots[0]!;
  gate.mode = "fail";
  await clock.advance(60_000 - (clock.now() % 60_000));
  const first = new Date(Math.floor(clock.now() / 60_000) * 60_000).toISOString();
  await everyAttemptFails();
  await poll(() => running!.logged(STORE_WAIT_JOB_LINE).length).toBe(1);
  await bot.stop(1_000);
  expect(await running!.daemon.letters.list()).toMatchObject([
    { source: "job", event: { job: "tally", scheduledFor: first }, retryRequestedAt: expect.any(String) },
  ]);
  gate.open();
  await bot.start();
  expect(await saidAtLeast(sandbox!, BOT, 1)).toEqual([`tallied ${first}`]);
  await poll(() => running!.daemon.letters.list()).toEqual([]);
  // Its one run after the start: replayed from the letter, not resumed from its mark as well.
  expect(runs.filter((r) => r === first)).toHaveLength(5 + 1);
});

/** The message `id` as an outgoing webhook's Zulip-format payload carries it. */
async function payload(id: number) {
  const key = sandbox!.control.apiKeyOf(BOT);
  const res = await request(`${sandbox!.url}/api/v1/messages/${id}?apply_markdown=false`, {
    headers: { authorization: `Basic ${Buffer.from(`${BOT}:${key}`).toString("base64")}` },
  });
  const { message } = (await res.body.json()) as { message: Record<string, unknown> };
  return { data: message.content, message, bot_email: BOT, token: TOKEN, trigger: "direct_message" };
}

it("an outgoing webhook's delivery outlasting every attempt waits for the store; its caller is answered by the deadline", async () => {
  const gate = new StoreGate();
  const dm = await start(gate, `outgoing_webhook:\n  path: /hooks/tally\n  token: ${TOKEN}`);
  await poll(() => running!.daemon.bots[0]!.status.state).toBe("webhook");
  gate.mode = "fail";
  const body = await payload(dm("remember"));
  const answer = request(`${running!.daemon.http!.url}/hooks/tally`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then((res) => res.body.json());
  await everyAttemptFails();
  // The answer the docs promise when no reply came by the deadline (8 s).
  expect(await answer).toEqual({ response_not_required: true });
  await poll(() => running!.logged(STORE_WAIT_LINE).length).toBe(1);
  await clock.advance(1_000);
  await poll(() => running!.logged(STORE_OUTAGE_LINE).length).toBe(5 + 4 + 1);
  // No failure's letter: only the delivery kept at its deadline, its run still going (its store
  // here takes letters), which goes once the run is over. Read as the store keeps them: `bothost
  // failed list` leaves that one out.
  expect(await running!.daemon.letters.of("tally").list()).toMatchObject([
    { source: "webhook", attempts: 0, runningIn: expect.any(String) },
  ]);
  expect(errors()).toEqual([]);
  gate.open();
  await clock.advance(2_000);
  await poll(() => running!.logged("handler succeeded on a later attempt").length).toBe(1);
  // The reply made after the deadline goes through the API.
  expect(await saidAtLeast(sandbox!, BOT, 1)).toEqual(["Noted."]);
  expect(await running!.daemon.letters.of("tally").list()).toEqual([]);
  expect(errors()).toEqual([]);
  expect(await counted("bothost_events_store_outage_total", "message")).toBe(5 + 1);
  expect(await counted("bothost_dead_letters_total", "message")).toBe(0);
});
