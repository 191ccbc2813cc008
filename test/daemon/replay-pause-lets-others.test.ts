/**
 * A replayed dead letter that fails again holds the bot's next letters through its attempts, not
 * through the pauses between them: while it waits for its next attempt, the next letters are
 * replayed. A daemon in this process against the sandbox over HTTP, on a held test clock (the
 * pauses end only where the test moves it). One letter's cause is not fixed: it fails every
 * attempt and is kept again, once; the letters after it are handled before its attempts run out.
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
const bot = defineBot({
  setup(b) {
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

/** Keeps one letter per text, in this order, each its own conversation; the daemon with them. */
async function keepLetters(texts: string[]): Promise<GatedDaemon> {
  replaying = false;
  badAttempts = 0;
  const daemon = await startGatedDaemon({
    name: "pausing",
    email: BOT,
    fullName: "Pausing",
    definition: bot,
    extra: "handler_timeout: 1h\nretries: { attempts: 3, backoff: 10s, max_backoff: 10s }",
    clock: new TestClock({ held: true }),
  });
  up = daemon;
  for (const [i, content] of texts.entries()) {
    const email = `p${i}@sandbox.example`;
    daemon.sandbox.control.createUser({ email, full_name: `P${i}` });
    daemon.sandbox.control.sendAs(email, { type: "direct", to: [BOT], content });
    // Kept in this order: the replay takes them oldest first.
    await expect
      .poll(async () => (await daemon.running.daemon.letters.list()).length, { timeout: 15_000 })
      .toBe(i + 1);
  }
  replaying = true;
  return daemon;
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
