/**
 * The poll pacing's arithmetic on a real event-queue bucket and a manual clock: at once while
 * traffic is light, one poll per 2 s once a burst is spent at the default 2,000 an hour, never
 * more than the budget less the headroom in any hour. (Over HTTP, test/events/busy-org.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { busiest } from "../../bench/lib/stats.ts";
import { RateBucket } from "../../src/api/rate-budget.ts";
import { PollPacer } from "../../src/events/poll-pacing.ts";
import { ManualClock } from "../support/manual-clock.ts";

const setup = (enforced = true) => {
  const clock = new ManualClock(1_750_000_000_000);
  const bucket = new RateBucket("events", { perMinute: 200, perHour: 2000 }, clock, enforced);
  return { clock, bucket, pacer: new PollPacer({ bucket, clock }) };
};

describe("poll pacing", () => {
  it("polls at once while traffic is light", async () => {
    const { clock, pacer } = setup();
    // One poll every 3 s (a message every 3 s) for an hour: never held.
    for (let i = 0; i < 1200; i++) {
      expect(pacer.take()).toBe(0);
      await clock.tick(3000);
    }
    expect(pacer.snapshot()).toMatchObject({ polls: 1200, held: 0, spacingMs: 0, steadySpacingMs: 2000 });
  });

  it("under sustained traffic spends bursts of 50 then 100, then spaces polls 2 s apart: 1,900 in any hour", async () => {
    const { clock, pacer } = setup();
    const sent: number[] = [];
    for (let i = 0; i < 4000; i++) {
      const wait = pacer.take();
      // The minute's burst at once, the rest of the hour's at the minute's pace (130 a minute).
      if (i < 50) expect(wait).toBe(0);
      else if (i < 100) expect(Math.abs(wait - 60_000 / 130)).toBeLessThan(1);
      await clock.tick(wait);
      sent.push(clock.now());
    }
    expect(pacer.snapshot().spacingMs).toBe(2000);
    const most = busiest(sent, 3_600_000);
    expect(most).toBeLessThanOrEqual(1900);
    expect(most).toBeGreaterThan(1890);
  });

  it("with a raised hourly limit, spaces polls within the minute instead of stalling on it", async () => {
    const clock = new ManualClock(1_750_000_000_000);
    // 200 a minute as configured, 20,000 an hour as the server reports: the minute is the tighter.
    const bucket = new RateBucket("events", { perMinute: 200, perHour: 20_000 }, clock, true);
    const pacer = new PollPacer({ bucket, clock });
    const sent: number[] = [];
    // A poll wanted every 250 ms (a message and its echo every 500 ms) for ten minutes.
    while (clock.now() < 1_750_000_000_000 + 600_000) {
      await clock.tick(pacer.take());
      // The client's own window, as every call meets it before going out.
      await clock.tick(bucket.nextStartAt() - clock.now());
      expect(bucket.take()).toBeUndefined();
      sent.push(clock.now());
      await clock.tick(250);
    }
    const gaps = sent.slice(1).map((t, i) => t - (sent[i] ?? 0));
    // Spaced (60 s / 130 polls once the burst is spent), never held until the minute frees.
    expect(Math.max(...gaps)).toBeLessThanOrEqual(462);
    expect(pacer.snapshot().steadySpacingMs).toBe(462);
    expect(busiest(sent, 60_000)).toBeLessThanOrEqual(180);
  });

  it("with a raised hourly limit, polls at once for an hour at 120 a minute", async () => {
    const clock = new ManualClock(1_750_000_000_000);
    const bucket = new RateBucket("events", { perMinute: 200, perHour: 20_000 }, clock, true);
    const pacer = new PollPacer({ bucket, clock });
    for (let i = 0; i < 7200; i++) {
      expect(pacer.take()).toBe(0);
      await clock.tick(500);
    }
  });

  it("a new queue's first poll goes out at once, from the headroom", () => {
    const { pacer } = setup();
    for (let i = 0; i < 100; i++) pacer.take();
    expect(pacer.take()).toBeGreaterThan(0);
    pacer.resume();
    expect(pacer.take()).toBe(0);
  });

  it("spreads what the server says is left until its reset", () => {
    const { clock, bucket, pacer } = setup();
    const reset = Math.floor(clock.now() / 1000) + 599;
    bucket.observe({
      "x-ratelimit-limit": "2000",
      "x-ratelimit-remaining": "9",
      "x-ratelimit-reset": String(reset),
    });
    // Ten minutes to the reset (after the whole second it is rounded to), 9 calls left.
    expect(pacer.take()).toBe(60_000);
  });

  it("never holds a poll when the client's rate limit is off", () => {
    const { pacer } = setup(false);
    for (let i = 0; i < 3000; i++) expect(pacer.take()).toBe(0);
  });
});
