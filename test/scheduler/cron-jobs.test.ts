import { afterEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { JobContext } from "../../src/pipeline/context.ts";
import { createWorld, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

type Run = JobContext["job"];
const at = (iso: string) => new Date(iso);

describe("bot.cron local jobs", () => {
  it("run on the bot's timer with a JobContext; a job that throws is logged and keeps its schedule", async () => {
    // One attempt per occurrence: retries and dead letters are job-failures.test.ts's.
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: "    retries: { attempts: 1 }" });
    const runs: Run[] = [];
    const runtime = await world.start((bot: BotApi) => {
      bot.cron("*/5 * * * *", {}, async (ctx) => {
        runs.push(ctx.job);
        await ctx.send({
          type: "channel",
          to: "general",
          topic: "ticks",
          content: `tick ${ctx.job.scheduledFor.toISOString()}`,
        });
      });
      bot.cron("*/10 * * * *", { id: "flaky", timezone: "Europe/Berlin" }, () => {
        throw new Error("boom");
      });
    });
    expect(runtime.scheduler.jobs().map((j) => [j.id, j.nextRunAt?.toISOString()])).toEqual([
      ["*/5 * * * * UTC", "2026-03-02T07:05:00.000Z"],
      ["flaky", "2026-03-02T07:10:00.000Z"],
    ]);
    await world.advanceTo("2026-03-02T07:05:00Z");
    await expect.poll(() => world.sent().map((m) => m.content)).toEqual(["tick 2026-03-02T07:05:00.000Z"]);
    expect(runs).toEqual([
      {
        id: "*/5 * * * * UTC",
        expression: "*/5 * * * *",
        scheduledFor: at("2026-03-02T07:05:00Z"),
        firedAt: at("2026-03-02T07:05:00Z"),
        catchUp: false,
      },
    ]);
    await world.advanceTo("2026-03-02T07:20:00Z");
    await expect
      .poll(() => world.logs.filter((l) => l.msg === "cron job failed").map((l) => l.scheduledFor))
      .toEqual(["2026-03-02T07:10:00.000Z", "2026-03-02T07:20:00.000Z"]);
    expect(world.logs.find((l) => l.msg === "cron job failed")).toMatchObject({
      level: 50,
      job: "flaky",
      err: { message: "boom" },
    });
    await expect.poll(() => world.sent()).toHaveLength(4);
    expect(runtime.scheduler.stats).toMatchObject({ jobRuns: 6, jobErrors: 2, jobsSkipped: 0 });
  });

  it("after downtime: run-once catches up once (persisted last run), skip waits for the next time", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const hourly: Run[] = [];
    const half: Run[] = [];
    const setup = (bot: BotApi) => {
      bot.cron("0 * * * *", { id: "hourly", missed: "run-once" }, (ctx) => void hourly.push(ctx.job));
      bot.cron("30 * * * *", { id: "half", missed: "skip" }, (ctx) => void half.push(ctx.job));
    };
    await world.start(setup);
    await world.advanceTo("2026-03-02T08:00:00Z");
    expect(hourly.map((r) => r.scheduledFor)).toEqual([at("2026-03-02T08:00:00Z")]);
    expect(half.map((r) => r.scheduledFor)).toEqual([at("2026-03-02T07:30:00Z")]);
    await world.stop();
    await world.advanceTo("2026-03-02T11:45:00Z"); // down through 09:00, 10:00, 11:00 and four half hours
    const runtime = await world.start(setup);
    await world.clock.tick(0);
    expect(hourly.slice(1)).toEqual([
      {
        id: "hourly",
        expression: "0 * * * *",
        scheduledFor: at("2026-03-02T11:00:00Z"),
        firedAt: at("2026-03-02T11:45:00Z"),
        catchUp: true,
      },
    ]);
    expect(half).toHaveLength(1);
    expect(world.logs.filter((l) => l.msg === "cron job missed while down; skipped")).toMatchObject([
      { job: "half", scheduledFor: "2026-03-02T11:30:00.000Z", reason: "missed" },
    ]);
    await world.advanceTo("2026-03-02T12:30:00Z");
    expect(hourly.slice(2).map((r) => [r.scheduledFor, r.catchUp])).toEqual([
      [at("2026-03-02T12:00:00Z"), false],
    ]);
    expect(half.slice(1).map((r) => r.scheduledFor)).toEqual([at("2026-03-02T12:30:00Z")]);
    expect(runtime.scheduler.stats).toMatchObject({ jobRuns: 3, jobsSkipped: 1 });
  });

  it("a bad cron declaration stops the bot's setup with a message naming the call", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await expect(world.start((bot) => void bot.cron("*/5 * * *", {}, () => {}))).rejects.toThrow(
      /daemon did not start/,
    );
    // bothost refused what setup declared: the line names the problem, with no stack trace.
    const failed = world.logs.find((l) => l.msg === "bot failed to start") as {
      error: string;
      err?: unknown;
    };
    expect(failed.error).toBe(
      'bot.cron("*/5 * * *"): expected 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, or a macro like @daily; got 4. [BOT_SETUP_INVALID]',
    );
    expect(failed.err).toBeUndefined();
  });
});
