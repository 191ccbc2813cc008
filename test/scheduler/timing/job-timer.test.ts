import { describe, expect, it } from "vitest";
import { type JobRun, JobTimer, type SkippedRun } from "../../../src/scheduler/timing/job-timer.ts";
import { ScheduleError } from "../../../src/scheduler/timing/occurrences.ts";
import { type Clock, MAX_TIMER_DELAY_MS } from "../../../src/time/clock.ts";
import { ManualClock } from "../../support/manual-clock.ts";

const T0 = Date.parse("2026-03-02T00:00:00Z"); // a Monday
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

function setup(start = T0, clock: Clock = new ManualClock(start)) {
  const runs: JobRun[] = [];
  const skips: SkippedRun[] = [];
  const errors: Array<{ error: unknown; jobId: string }> = [];
  const persisted = new Map<string, Date>();
  const timer = new JobTimer({
    clock,
    onRun: (jobId, firedAt) => persisted.set(jobId, firedAt),
    onSkip: (skip) => skips.push(skip),
    onError: (error, run) => errors.push({ error, jobId: run.jobId }),
  });
  const record = (run: JobRun) => {
    runs.push(run);
  };
  return { timer, runs, skips, errors, persisted, record };
}

const summary = (runs: JobRun[]) =>
  runs.map(
    (r) =>
      `${r.jobId} ${r.scheduledFor.toISOString()} fired ${r.firedAt.toISOString()}${r.catchUp ? " catch-up" : ""}`,
  );

describe("JobTimer", () => {
  it("fires each occurrence on time, reports it through onRun, and uses one timer for all jobs", async () => {
    const clock = new ManualClock(T0);
    const { timer, runs, persisted, record } = setup(T0, clock);
    timer.add({ id: "hourly", cron: "0 * * * *", timezone: "UTC" }, record);
    timer.add({ id: "half", cron: "30 * * * *", timezone: "UTC" }, record);
    timer.add({ id: "daily", cron: "0 9 * * *", timezone: "Europe/Berlin" }, record);
    expect(timer.jobs().map((j) => j.nextRunAt)).toEqual([undefined, undefined, undefined]);
    timer.start();
    expect(clock.pendingTimers).toBe(1);
    expect(timer.jobs().map((j) => [j.id, j.nextRunAt?.toISOString()])).toEqual([
      ["hourly", "2026-03-02T01:00:00.000Z"],
      ["half", "2026-03-02T00:30:00.000Z"],
      ["daily", "2026-03-02T08:00:00.000Z"],
    ]);
    await clock.tick(2 * HOUR);
    expect(summary(runs)).toEqual([
      "half 2026-03-02T00:30:00.000Z fired 2026-03-02T00:30:00.000Z",
      "hourly 2026-03-02T01:00:00.000Z fired 2026-03-02T01:00:00.000Z",
      "half 2026-03-02T01:30:00.000Z fired 2026-03-02T01:30:00.000Z",
      "hourly 2026-03-02T02:00:00.000Z fired 2026-03-02T02:00:00.000Z",
    ]);
    expect(persisted.get("hourly")?.toISOString()).toBe("2026-03-02T02:00:00.000Z");
    expect(clock.pendingTimers).toBe(1);
    await timer.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it("missed: skip — after downtime it schedules only the next future occurrence and reports the miss", async () => {
    const clock = new ManualClock(T0 + 10 * HOUR);
    const { timer, runs, skips, record } = setup(T0, clock);
    const lastRunAt = new Date(T0 - 3 * 24 * HOUR); // three daily runs missed
    timer.add({ id: "d", cron: "0 6 * * *", timezone: "UTC", missed: "skip", lastRunAt }, record);
    timer.start();
    await clock.tick(0);
    expect(runs).toEqual([]);
    expect(skips).toEqual([{ jobId: "d", scheduledFor: new Date("2026-03-02T06:00:00Z"), reason: "missed" }]);
    expect(timer.jobs()[0]?.nextRunAt?.toISOString()).toBe("2026-03-03T06:00:00.000Z");
    await clock.tickTo(Date.parse("2026-03-03T06:00:00Z"));
    expect(summary(runs)).toEqual(["d 2026-03-03T06:00:00.000Z fired 2026-03-03T06:00:00.000Z"]);
  });

  it("missed: run-once — runs once immediately (not once per missed occurrence), then continues", async () => {
    const clock = new ManualClock(T0 + 10 * HOUR);
    const { timer, runs, skips, persisted, record } = setup(T0, clock);
    const lastRunAt = new Date(T0 - 3 * 24 * HOUR);
    timer.add({ id: "d", cron: "0 6 * * *", timezone: "UTC", missed: "run-once", lastRunAt }, record);
    timer.start();
    await clock.tick(0);
    expect(summary(runs)).toEqual(["d 2026-03-02T06:00:00.000Z fired 2026-03-02T10:00:00.000Z catch-up"]);
    expect(persisted.get("d")?.toISOString()).toBe("2026-03-02T10:00:00.000Z");
    await clock.tickTo(Date.parse("2026-03-03T12:00:00Z"));
    expect(summary(runs).slice(1)).toEqual(["d 2026-03-03T06:00:00.000Z fired 2026-03-03T06:00:00.000Z"]);
    expect(skips).toEqual([]);
  });

  it("no catch-up when lastRunAt is absent or nothing was missed", async () => {
    const clock = new ManualClock(T0 + 10 * HOUR);
    const { timer, runs, skips, record } = setup(T0, clock);
    timer.add({ id: "fresh", cron: "0 6 * * *", timezone: "UTC", missed: "run-once" }, record);
    const recent = new Date("2026-03-02T06:00:05Z"); // ran today already
    timer.add(
      { id: "recent", cron: "0 6 * * *", timezone: "UTC", missed: "run-once", lastRunAt: recent },
      record,
    );
    timer.start();
    await clock.tick(HOUR);
    expect(runs).toEqual([]);
    expect(skips).toEqual([]);
  });

  it("a job that never ran counts missed occurrences from its declaredAt, as from a lastRunAt", async () => {
    const clock = new ManualClock(T0 + 10 * HOUR);
    const { timer, runs, skips, record } = setup(T0, clock);
    const declaredAt = new Date(T0 + 5 * HOUR); // first started at 05:00, down over 06:00
    timer.add({ id: "once", cron: "0 6 * * *", timezone: "UTC", missed: "run-once", declaredAt }, record);
    timer.add({ id: "skip", cron: "0 6 * * *", timezone: "UTC", missed: "skip", declaredAt }, record);
    const later = new Date(T0 + 7 * HOUR); // declared after today's 06:00: nothing missed
    timer.add(
      { id: "later", cron: "0 6 * * *", timezone: "UTC", missed: "run-once", declaredAt: later },
      record,
    );
    timer.start();
    await clock.tick(0);
    expect(summary(runs)).toEqual(["once 2026-03-02T06:00:00.000Z fired 2026-03-02T10:00:00.000Z catch-up"]);
    expect(skips).toEqual([
      { jobId: "skip", scheduledFor: new Date("2026-03-02T06:00:00Z"), reason: "missed" },
    ]);
    expect(timer.jobs().map((j) => j.nextRunAt?.toISOString())).toEqual([
      "2026-03-03T06:00:00.000Z",
      "2026-03-03T06:00:00.000Z",
      "2026-03-03T06:00:00.000Z",
    ]);
  });

  it("a timer that fires late by more than a period applies the missed-run policy", async () => {
    // A clock whose timers all fire three hours late, like a machine that was suspended.
    const manual = new ManualClock(T0);
    const lateClock: Clock = {
      now: () => manual.now(),
      setTimeout: (fn, ms) => manual.setTimeout(fn, ms + 3 * HOUR),
      clearTimeout: (h) => manual.clearTimeout(h),
    };
    const { timer, runs, skips, record } = setup(T0, lateClock);
    timer.add({ id: "skip", cron: "0 * * * *", timezone: "UTC", missed: "skip" }, record);
    timer.add({ id: "once", cron: "0 * * * *", timezone: "UTC", missed: "run-once" }, record);
    timer.start();
    await manual.tickTo(T0 + 4 * HOUR);
    expect(summary(runs)).toEqual(["once 2026-03-02T04:00:00.000Z fired 2026-03-02T04:00:00.000Z catch-up"]);
    expect(skips).toEqual([{ jobId: "skip", scheduledFor: new Date(T0 + 4 * HOUR), reason: "missed" }]);
  });

  it("a throwing handler is reported through onError and never stops the timer", async () => {
    const clock = new ManualClock(T0);
    const { timer, runs, errors, record } = setup(T0, clock);
    timer.add({ id: "sync", cron: "* * * * *", timezone: "UTC" }, () => {
      throw new Error("sync boom");
    });
    timer.add({ id: "async", cron: "* * * * *", timezone: "UTC" }, async () => {
      await Promise.resolve();
      throw new Error("async boom");
    });
    timer.add({ id: "ok", cron: "* * * * *", timezone: "UTC" }, record);
    timer.start();
    await clock.tick(3 * 60_000);
    expect(errors.map((e) => `${e.jobId}: ${(e.error as Error).message}`)).toEqual([
      "sync: sync boom",
      "async: async boom",
      "sync: sync boom",
      "async: async boom",
      "sync: sync boom",
      "async: async boom",
    ]);
    expect(runs).toHaveLength(3);
  });

  it("a handler still running at its next occurrence is not run concurrently; the skip is reported", async () => {
    const clock = new ManualClock(T0);
    const { timer, skips } = setup(T0, clock);
    const starts: string[] = [];
    let active = 0;
    let maxActive = 0;
    timer.add({ id: "slow", cron: "* * * * *", timezone: "UTC" }, async (run) => {
      starts.push(run.scheduledFor.toISOString());
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise<void>((resolve) => clock.setTimeout(resolve, 90_000)); // 1.5 periods
      active--;
    });
    timer.start();
    await clock.tick(4 * 60_000);
    expect(starts).toEqual(["2026-03-02T00:01:00.000Z", "2026-03-02T00:03:00.000Z"]);
    expect(skips).toEqual([
      { jobId: "slow", scheduledFor: new Date("2026-03-02T00:02:00Z"), reason: "still-running" },
      { jobId: "slow", scheduledFor: new Date("2026-03-02T00:04:00Z"), reason: "still-running" },
    ]);
    expect(maxActive).toBe(1);
    expect(timer.jobs()[0]?.running).toBe(true);
  });

  it("add() rejects a duplicate id and a bad schedule with clear errors", () => {
    const { timer, record } = setup();
    timer.add({ id: "a", cron: "* * * * *", timezone: "UTC" }, record);
    const errorOf = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        expect(err).toBeInstanceOf(ScheduleError);
        return `${(err as ScheduleError).code} ${(err as ScheduleError).field}: ${(err as Error).message}`;
      }
      throw new Error("expected a ScheduleError");
    };
    expect(errorOf(() => timer.add({ id: "a", cron: "* * * * *", timezone: "UTC" }, record))).toBe(
      'SCHEDULE_INVALID id: job id "a" is already in use; give each job its own id.',
    );
    expect(errorOf(() => timer.add({ id: "c", cron: "0 9 * * *", timezone: "Berlin" }, record))).toBe(
      'SCHEDULE_INVALID timezone: jobs["c"].timezone "Berlin" is not a known IANA time zone; use a name like "Europe/Berlin", "America/New_York" or "UTC".',
    );
    expect(timer.jobs().map((j) => j.id)).toEqual(["a"]);
  });

  it("stop() aborts handlers' signal, waits for them, and gives up at the deadline", async () => {
    const clock = new ManualClock(T0);
    const { timer } = setup(T0, clock);
    const aborted: string[] = [];
    timer.add({ id: "polite", cron: "* * * * *", timezone: "UTC" }, async ({ signal }) => {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
      aborted.push("polite");
    });
    timer.add({ id: "stubborn", cron: "* * * * *", timezone: "UTC" }, () => new Promise<void>(() => {}));
    timer.start();
    await clock.tick(60_000);
    const stopping = timer.stop(5_000);
    await clock.tick(5_000);
    expect(await stopping).toEqual({ unfinished: ["stubborn"] });
    expect(aborted).toEqual(["polite"]);
    expect(timer.jobs().map((j) => j.nextRunAt)).toEqual([undefined, undefined]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("caps the timer delay at 2^31-1 ms and re-arms until a far occurrence is due", async () => {
    const clock = new ManualClock(Date.parse("2026-01-02T00:00:00Z"));
    const { timer, runs, record } = setup(T0, clock);
    timer.add({ id: "yearly", cron: "@yearly", timezone: "UTC" }, record);
    timer.start();
    expect((clock.nextDueAt() ?? 0) - clock.now()).toBe(MAX_TIMER_DELAY_MS);
    await clock.tick(MAX_TIMER_DELAY_MS);
    expect(runs).toEqual([]);
    expect(clock.pendingTimers).toBe(1);
    await clock.tickTo(Date.parse("2027-01-01T00:00:00Z"));
    expect(summary(runs)).toEqual(["yearly 2027-01-01T00:00:00.000Z fired 2027-01-01T00:00:00.000Z"]);
  });

  it("across New York's fall-back night a daily 01:30 job fires once", async () => {
    const clock = new ManualClock(Date.parse("2026-10-31T12:00:00Z"));
    const { timer, runs, record } = setup(T0, clock);
    timer.add({ id: "n", cron: "30 1 * * *", timezone: "America/New_York" }, record);
    timer.start();
    await clock.tickTo(Date.parse("2026-11-02T12:00:00Z"));
    expect(runs.map((r) => iso(r.scheduledFor.getTime()))).toEqual([
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
  });

  it("10,000 jobs fire in time order on one timer", async () => {
    const clock = new ManualClock(T0 - 1000);
    const { timer, runs, record } = setup(T0, clock);
    // Each job fires once a day at its own second: i seconds after midnight, in shuffled add order.
    const ids = Array.from({ length: 10_000 }, (_, i) => (i * 7919) % 10_000);
    for (const i of ids) {
      const cron = `${i % 60} ${Math.floor(i / 60) % 60} ${Math.floor(i / 3600)} * * *`;
      timer.add({ id: `job-${i}`, cron, timezone: "UTC" }, record);
    }
    timer.start();
    expect(clock.pendingTimers).toBe(1);
    await clock.tickTo(T0 + 10_000 * 1000);
    expect(runs).toHaveLength(10_000);
    expect(runs.map((r) => r.jobId)).toEqual(Array.from({ length: 10_000 }, (_, i) => `job-${i}`));
    expect(runs.every((r) => r.firedAt.getTime() === r.scheduledFor.getTime())).toBe(true);
    expect(clock.pendingTimers).toBe(1);
    await timer.stop();
    // CPU-bound (10,000 cron parses and firings): on a loaded 2-core machine it has taken past the
    // default 20 s. It checks order, not speed (bench/ measures that).
  }, 90_000);
});
