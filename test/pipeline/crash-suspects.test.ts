/**
 * The suspects' lane (src/pipeline/crash-suspects.ts): one run at a time in its order, each turn
 * over when its run releases it, or at the latest after its hold (a handler that never returns),
 * and a stopping bot's runs let through at once. The end-to-end case, with real processes that
 * kill themselves, is test/e2e/crash-loop-innocent.test.ts.
 */
import { describe, expect, it } from "vitest";
import { SuspectLane } from "../../src/pipeline/crash-suspects.ts";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";

const turnsOf = (
  lane: SuspectLane,
  owner: object,
  keys: string[],
  hold: { clock: ManualClock; ms: number },
) => {
  const began: string[] = [];
  for (const key of keys) void lane.take(owner, key, hold).then(() => began.push(key));
  return began;
};

describe("SuspectLane", () => {
  it("gives one turn at a time, in order, each ended by its release", async () => {
    const clock = new ManualClock();
    const lane = new SuspectLane();
    const bot = {};
    const began = turnsOf(lane, bot, ["a", "b", "c"], { clock, ms: 30_000 });
    await flushAsync();
    expect(began).toEqual(["a"]);
    lane.release(bot, "b"); // not its turn: nothing changes
    await flushAsync();
    expect(began).toEqual(["a"]);
    lane.release(bot, "a");
    await flushAsync();
    expect(began).toEqual(["a", "b"]);
    lane.release(bot, "b");
    await flushAsync();
    expect(began).toEqual(["a", "b", "c"]);
  });

  it("ends a turn its run never releases after its hold (a handler that never returns)", async () => {
    const clock = new ManualClock();
    const lane = new SuspectLane();
    const bot = {};
    const began = turnsOf(lane, bot, ["stuck", "next"], { clock, ms: 30_000 });
    await clock.tick(29_999);
    expect(began).toEqual(["stuck"]);
    await clock.tick(1);
    expect(began).toEqual(["stuck", "next"]);
  });

  it("lets a stopping bot's runs through, and keeps another bot's order", async () => {
    const clock = new ManualClock();
    const lane = new SuspectLane();
    const [one, two] = [{}, {}];
    const hold = { clock, ms: 30_000 };
    const began: string[] = [];
    for (const [owner, key] of [
      [two, "two:a"],
      [one, "one:a"],
      [two, "two:b"],
      [one, "one:b"],
    ] as const)
      void lane.take(owner, key, hold).then(() => began.push(key));
    await flushAsync();
    expect(began).toEqual(["two:a"]);
    lane.leave(one);
    await flushAsync();
    expect(began).toEqual(["two:a", "one:a", "one:b"]);
    lane.release(two, "two:a");
    await flushAsync();
    expect(began).toEqual(["two:a", "one:a", "one:b", "two:b"]);
    // Holding the turn, the stopping bot gives it to the next one at once.
    void lane.take(one, "one:c", hold).then(() => began.push("one:c"));
    void lane.take(two, "two:c", hold).then(() => began.push("two:c"));
    lane.release(two, "two:b");
    await flushAsync();
    expect(began.at(-1)).toBe("one:c");
    lane.leave(one);
    await flushAsync();
    expect(began.at(-1)).toBe("two:c");
  });
});
