/**
 * What an operator sees while the state store fails the bot's writes: the embedded store's disk
 * full for real (test/support/file-size-limit.ts), then space back (a Redis outage: store-health-redis.test.ts). `/readyz` turns not-ready with
 * the store's code and since-when, the status names the outage, `/metrics` counts it, and the log
 * says it once when it begins and once when it ends, however many tries it took. A real daemon in
 * this process against the sandbox, its HTTP listener asked over real HTTP, on a test clock that
 * stands still between the test's moves (a pause ends only where the test passes it).
 */
import { join } from "node:path";
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { STORE_OUTAGE_LINE, STORE_WAIT_LINE } from "../../src/pipeline/handler-failures.ts";
import { STORE_BACK_LINE, STORE_FAILING_LINE } from "../../src/pipeline/store-health.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { fillDiskAt, limitFiles } from "../support/file-size-limit.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { parsePrometheus, sampleValue } from "../support/prometheus-text.ts";
import { botSaid, saidAtLeast } from "../support/self-killing-bot.ts";
import { TALLY_EMAIL as BOT, startTally } from "../support/tally-bot.ts";

let up: GatedDaemon | undefined;
afterEach(async () => {
  limitFiles("unlimited");
  await closeGatedDaemon(up);
  up = undefined;
});

async function start(): Promise<GatedDaemon> {
  up = await startTally(new TestClock({ held: true }));
  return up;
}

/** `expect.poll` with 15 s of real time: the clock and the disk decide; the bound is for a loaded machine. */
const poll = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 15_000 });

async function get(path: string): Promise<{ status: number; body: string }> {
  const daemon = up!.running.daemon;
  const res = await request(`${daemon.http!.url}${path}`);
  return { status: res.statusCode, body: await res.body.text() };
}

async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
  const { status, body } = await get("/readyz");
  return { status, body: JSON.parse(body) };
}

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  return sampleValue(parsePrometheus((await get("/metrics")).body), name, { bot: "tally", ...labels });
}

/** Up, "a" answered and recorded, ready; then the disk is full. */
async function fullAfterA(): Promise<GatedDaemon> {
  const { running, dm, sandbox } = await start();
  const a = dm("a");
  expect(await saidAtLeast(sandbox, BOT, 1)).toEqual(["a: 1"]);
  await running.ledger.until("tally", a, 5_000, () => new Error("a never recorded handled"));
  await poll(async () => (await readyz()).status).toBe(200);
  expect(await metric("bothost_state_store_failing", {})).toBe(0);
  fillDiskAt(join(up!.dir, "state.log"));
  return up!;
}

it("a run the full disk fails: /readyz 503 with the store's code, the status and metrics name it, said once however long; ready again when a write lands", async () => {
  const { running, dm, clock, sandbox } = await fullAfterA();
  const filledAt = clock.now();
  dm("b");
  await poll(async () => (await readyz()).status).toBe(503);
  const notReady = await readyz();
  expect(notReady.body).toMatchObject({
    ready: false,
    bots: [
      {
        bot: "tally",
        ready: false,
        reason: expect.stringContaining("the state store fails the bot's writes (STATE_IO)"),
        store: { code: "STATE_IO", failingSince: expect.any(String) },
      },
    ],
  });
  const since = (notReady.body.bots as { store: { failingSince: string } }[])[0]!.store.failingSince;
  expect(Date.parse(since)).toBeGreaterThanOrEqual(filledAt);
  const status = JSON.parse((await get("/admin/status")).body);
  expect(status.bots[0].store).toMatchObject({
    code: "STATE_IO",
    since,
    error: expect.stringContaining("write"),
  });
  expect((await get("/status")).body).toContain("the state store fails its writes since");
  expect(await metric("bothost_state_store_failing", {})).toBe(1);
  // Every attempt (2, 4, 8, 16 s apart), then the waits for the store (1 s doubling to 30 s):
  // about ten minutes of tries.
  for (let n = 1; n <= 4; n++) {
    await poll(() => running.logged(`${STORE_OUTAGE_LINE}; running`).length).toBe(n);
    await clock.advance(2_000 * 2 ** (n - 1));
  }
  await poll(() => running.logged(STORE_WAIT_LINE).length).toBe(1);
  for (const pause of [1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 30_000, 30_000])
    await clock.advance(pause);
  await poll(() => metric("bothost_state_store_write_failures_total", { code: "STATE_IO" })).toBeGreaterThan(
    10,
  );
  // The outage said once; of the runs' tries that met it, the first at warn, the rest at debug.
  expect(running.logged(STORE_FAILING_LINE)).toMatchObject([{ level: 40, code: "STATE_IO" }]);
  const tries = running.logged(STORE_OUTAGE_LINE).filter((l) => !String(l.msg).includes("; running"));
  expect(tries.filter((l) => l.level === 40)).toHaveLength(1);
  expect(tries.length).toBeGreaterThan(5);
  expect((await readyz()).status).toBe(503);
  limitFiles("unlimited");
  await clock.advance(30_000);
  expect(await saidAtLeast(sandbox, BOT, 2)).toEqual(["a: 1", "b: 2"]);
  await poll(async () => (await readyz()).status).toBe(200);
  expect(running.logged(STORE_BACK_LINE)).toMatchObject([
    { level: 30, failures: expect.any(Number), failedForMs: expect.any(Number) },
  ]);
  expect(running.logged(STORE_BACK_LINE)[0]!.failedForMs).toBeGreaterThan(60_000);
  expect(JSON.parse((await get("/admin/status")).body).bots[0].store).toBeUndefined();
  expect(await metric("bothost_state_store_failing", {})).toBe(0);
});

it("a bot idle once its marks failed is ready again when the disk is, without a message to handle", async () => {
  const { running, dm, clock } = await fullAfterA();
  // Handled with nothing to write but its mark: the mark's save fails.
  const quiet = dm("quiet");
  await running.ledger.until("tally", quiet, 5_000, () => new Error("quiet never handled"));
  await poll(async () => (await readyz()).status).toBe(503);
  await clock.advance(1_000);
  await clock.advance(2_000);
  expect((await readyz()).status).toBe(503);
  limitFiles("unlimited");
  // The ledger's save is tried again after its pause (4 s now): it lands, nothing else comes.
  await clock.advance(4_000);
  await poll(async () => (await readyz()).status).toBe(200);
  expect(running.logged(STORE_FAILING_LINE)).toHaveLength(1);
  expect(running.logged(STORE_BACK_LINE)).toHaveLength(1);
});

it("a bot stopped during the outage and started again once it is over (a lease moved back) is ready without a write", async () => {
  const { running, dm } = await fullAfterA();
  const quiet = dm("quiet");
  await running.ledger.until("tally", quiet, 5_000, () => new Error("quiet never handled"));
  await poll(async () => (await readyz()).status).toBe(503);
  // Stopped here as a lost lease stops it, its marks' retries with it; the disk has space again
  // while it is stopped, and nothing of the stopped run writes to say so.
  const runtime = running.daemon.bots.find((b) => b.name === "tally")!;
  await runtime.stop(1_000);
  limitFiles("unlimited");
  await runtime.start();
  await poll(async () => (await readyz()).status).toBe(200);
  expect((await readyz()).body).toMatchObject({ ready: true });
});

it("a dialog's write the full disk fails is tried again quietly once the outage is said, and lands when space is back", async () => {
  const { running, dm, clock, sandbox } = await fullAfterA();
  dm("size");
  const line = "the state store failed a dialog's write; trying again";
  await poll(() => running.logged(line).length).toBeGreaterThan(0);
  for (const pause of [250, 500, 1_000, 2_000, 4_000, 8_000]) await clock.advance(pause);
  await poll(() => running.logged(line).length).toBeGreaterThan(4);
  expect(running.logged(STORE_FAILING_LINE)).toHaveLength(1);
  expect(running.logged(line).filter((l) => l.level === 40).length).toBeLessThanOrEqual(1);
  limitFiles("unlimited");
  await poll(async () => {
    await clock.advance(1_000);
    return botSaid(sandbox, BOT);
  }).toEqual(["a: 1", "Which size?"]);
  await poll(() => running.logged(STORE_BACK_LINE).length).toBe(1);
});

it("a cron-only bot whose job's run met the outage is ready again once a later write of its job lands", async () => {
  // No message comes: no handled mark is saved, only the job's records of its run and its send.
  const hourly = defineBot({
    setup(bot) {
      bot.cron("0 * * * *", async (ctx) => {
        await ctx.send({ type: "channel", to: "general", topic: "hourly", content: "on the hour" });
      });
    },
  });
  const clock = new TestClock({ held: true, start: "2030-01-07T09:59:00Z" });
  up = await startGatedDaemon({
    name: "hourly",
    email: "hourly-bot@sandbox.example",
    fullName: "Hourly",
    definition: hourly,
    channels: ["general"],
    clock,
    global: "http:\n  listen: 127.0.0.1:0",
  });
  const { running } = up;
  await poll(async () => (await readyz()).status).toBe(200);
  fillDiskAt(join(up.dir, "state.log"));
  await clock.advanceTo("2030-01-07T10:00:00Z");
  await poll(() => running.logged(`${STORE_OUTAGE_LINE}; running`).length).toBe(1);
  expect((await readyz()).status).toBe(503);
  limitFiles("unlimited");
  await clock.advance(2_000);
  await poll(() => running.logged("handler succeeded on a later attempt").length).toBe(1);
  await poll(async () => (await readyz()).status).toBe(200);
  expect(running.logged(STORE_BACK_LINE)).toHaveLength(1);
});
