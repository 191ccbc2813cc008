/**
 * A replayed dead letter that fails again holds the bot's next letters through its attempts, not
 * through the pauses between them: while it waits for its next attempt, the next letters are
 * replayed. A daemon in this process against the sandbox over HTTP, on a held test clock (the
 * pauses end only where the test moves it). One letter's cause is not fixed: it fails every
 * attempt and is kept again, once; the letters after it are handled before its attempts run out.
 * A cron job's letter takes its turns as an event letter's does.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "pausing-bot@sandbox.example";
const OTHERS = 3;
let up: GatedDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

let replaying = false;
let badAttempts = 0;
/** Set: the run of "ok 0" waits for it before answering. */
let holdOk0: Promise<void> | undefined;
let jobAttempts = 0;
const bot = defineBot({
  setup(b) {
    // Its occurrences fall outside the tests' clocks: it runs only as its kept letter's replay.
    b.cron("0 3 * * *", { id: "nightly" }, () => {
      jobAttempts++;
      throw new Error("the backend for nightly is still down");
    });
    b.on("message", async (ctx) => {
      // Kept at once the first time, so the letters are there without their retries.
      if (!replaying) throw new NoRetry("not yet");
      if (ctx.text === "bad") {
        badAttempts++;
        throw new Error("the backend for bad is still down");
      }
      if (ctx.text === "ok 0") await holdOk0;
      await ctx.reply(`ack ${ctx.text}`);
    });
  },
});

/**
 * Keeps one letter per text, in this order, each its own conversation, after the nightly job's
 * letter when `job`; the daemon with them.
 */
async function keepLetters(texts: string[], job = false): Promise<GatedDaemon> {
  replaying = false;
  badAttempts = 0;
  jobAttempts = 0;
  const daemon = await startGatedDaemon({
    name: "pausing",
    email: BOT,
    fullName: "Pausing",
    definition: bot,
    extra: "handler_timeout: 1h\nretries: { attempts: 3, backoff: 10s, max_backoff: 10s }",
    clock: new TestClock({ held: true, start: "2026-03-02T07:00:00Z" }),
  });
  up = daemon;
  if (job) await keepJobLetter(daemon);
  const before = job ? 1 : 0;
  for (const [i, content] of texts.entries()) {
    const email = `p${i}@sandbox.example`;
    daemon.sandbox.control.createUser({ email, full_name: `P${i}` });
    daemon.sandbox.control.sendAs(email, { type: "direct", to: [BOT], content });
    // Kept in this order: the replay takes them oldest first.
    await expect
      .poll(async () => (await daemon.running.daemon.letters.list()).length, { timeout: 15_000 })
      .toBe(before + i + 1);
  }
  replaying = true;
  return daemon;
}

/** The nightly job's occurrence kept as a dead letter, as its runner keeps one whose attempts failed. */
async function keepJobLetter(daemon: GatedDaemon): Promise<void> {
  const at = "2026-03-02T03:00:00.000Z";
  await daemon.running.daemon.letters.of("pausing").add({
    source: "job",
    event: { type: "cron_job", job: "nightly", scheduledFor: at, firedAt: at, catchUp: false },
    error: new Error("the backend for nightly is down"),
    attempts: 3,
    firstFailedAt: at,
    lastFailedAt: at,
  });
}

/** Moves the held clock a second at a time, up to `seconds`, until `done`. */
async function advanceUntil(clock: TestClock, seconds: number, done: () => boolean): Promise<void> {
  for (let s = 0; s < seconds && !done(); s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

it("the letters after one failing again are replayed during its pauses, and it is kept again once", async () => {
  const { sandbox, clock, running } = await keepLetters([
    "bad",
    ...Array.from({ length: OTHERS }, (_, i) => `ok ${i}`),
  ]);
  const letters = running.daemon.letters;
  await letters.retry({ all: true });
  // The bad letter's first attempt fails; the others go on during its first pause (10 s).
  await expect.poll(() => badAttempts, { timeout: 15_000 }).toBe(1);
  for (let s = 0; s < 9 && botSaid(sandbox, BOT).length < OTHERS; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await expect.poll(() => botSaid(sandbox, BOT).length, { timeout: 5_000 }).toBe(OTHERS);
  expect(badAttempts).toBe(1);
  // Its later attempts: 3 in all, then kept again, no longer marked for replay.
  for (let s = 0; s < 40 && badAttempts < 3; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await expect
    .poll(async () => (await letters.list()).map((l) => l.retryRequestedAt), { timeout: 15_000 })
    .toEqual([undefined]);
  expect(badAttempts).toBe(3);
  const [kept] = await letters.list();
  expect(kept?.error.message).toBe("the backend for bad is still down");
  expect(botSaid(sandbox, BOT).sort()).toEqual(["ack ok 0", "ack ok 1", "ack ok 2"]);
});

it("a letter's next attempt waits for the attempt of another letter under way", async () => {
  let release = () => {};
  holdOk0 = new Promise((resolve) => {
    release = resolve;
  });
  const { sandbox, clock, running } = await keepLetters(["bad", "ok 0"]);
  await running.daemon.letters.retry({ all: true });
  await expect.poll(() => badAttempts, { timeout: 15_000 }).toBe(1);
  // The pause is over while "ok 0" runs: the bad letter's second attempt waits for it.
  for (let s = 0; s < 15; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(badAttempts).toBe(1);
  release();
  await expect.poll(() => botSaid(sandbox, BOT), { timeout: 15_000 }).toEqual(["ack ok 0"]);
  await expect.poll(() => badAttempts, { timeout: 15_000 }).toBe(2);
  holdOk0 = undefined;
});

it("a cron job's letter failing again lets the next letters be replayed during its pauses", async () => {
  const { sandbox, clock, running } = await keepLetters(
    Array.from({ length: OTHERS }, (_, i) => `ok ${i}`),
    true,
  );
  const letters = running.daemon.letters;
  await letters.retry({ all: true });
  await expect.poll(() => jobAttempts, { timeout: 15_000 }).toBe(1);
  // Within its first pause (10 s), the event letters are handled.
  await advanceUntil(clock, 9, () => botSaid(sandbox, BOT).length >= OTHERS);
  await expect.poll(() => botSaid(sandbox, BOT).length, { timeout: 5_000 }).toBe(OTHERS);
  expect(jobAttempts).toBe(1);
  await advanceUntil(clock, 40, () => jobAttempts >= 3);
  await expect
    .poll(async () => (await letters.list()).map((l) => [l.source, l.retryRequestedAt]), { timeout: 15_000 })
    .toEqual([["job", undefined]]);
  expect(jobAttempts).toBe(3);
});
