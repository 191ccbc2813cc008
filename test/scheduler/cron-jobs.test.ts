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
    // Five minutes at a time: a run's effects wait for real writes (its mark as under way first).
    for (const [i, at] of ["07:10", "07:15", "07:20"].entries()) {
      await world.advanceTo(`2026-03-02T${at}:00Z`);
      await expect.poll(() => world.sent()).toHaveLength(i + 2);
    }
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
    expect(
      world.logs.filter((l) => l.msg === "cron job missed while down; running it once now"),
    ).toMatchObject([{ job: "hourly", scheduledFor: "2026-03-02T11:00:00.000Z" }]);
    await world.advanceTo("2026-03-02T12:30:00Z");
    expect(hourly.slice(2).map((r) => [r.scheduledFor, r.catchUp])).toEqual([
      [at("2026-03-02T12:00:00Z"), false],
    ]);
    expect(half.slice(1).map((r) => r.scheduledFor)).toEqual([at("2026-03-02T12:30:00Z")]);
    expect(runtime.scheduler.stats).toMatchObject({ jobRuns: 3, jobsSkipped: 1 });
  });

  it("down over a job's first occurrence: run-once catches it up, skip logs the skip", async () => {
    world = await createWorld("2026-06-01T08:30:00Z");
    const once: Run[] = [];
    const skipped: Run[] = [];
    const setup = (bot: BotApi) => {
      bot.cron("0 9 * * *", { id: "once", missed: "run-once" }, (ctx) => void once.push(ctx.job));
      bot.cron("0 9 * * *", { id: "skip" }, (ctx) => void skipped.push(ctx.job));
    };
    await world.start(setup); // the jobs' first start: nothing to catch up
    await world.clock.tick(0);
    await world.stop();
    await world.advanceTo("2026-06-01T09:30:00Z"); // down over their first 09:00
    const runtime = await world.start(setup);
    await world.clock.tick(0);
    expect(once).toEqual([
      {
        id: "once",
        expression: "0 9 * * *",
        scheduledFor: at("2026-06-01T09:00:00Z"),
        firedAt: at("2026-06-01T09:30:00Z"),
        catchUp: true,
      },
    ]);
    expect(skipped).toEqual([]);
    expect(world.logs.filter((l) => l.msg === "cron job missed while down; skipped")).toMatchObject([
      { job: "skip", scheduledFor: "2026-06-01T09:00:00.000Z", reason: "missed" },
    ]);
    await world.advanceTo("2026-06-02T09:00:00Z");
    expect([...once, ...skipped].slice(1).map((r) => [r.id, r.scheduledFor, r.catchUp])).toEqual([
      ["once", at("2026-06-02T09:00:00Z"), false],
      ["skip", at("2026-06-02T09:00:00Z"), false],
    ]);
    expect(runtime.scheduler.stats).toMatchObject({ jobRuns: 3, jobsSkipped: 1 });
  });

  it("a run cut short (its process killed) runs again at the next start, for its occurrence", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runs: Run[] = [];
    const setup = (bot: BotApi) => {
      bot.cron("0 * * * *", { id: "hourly" }, (ctx) => void runs.push(ctx.job));
    };
    await world.start(setup);
    await world.advanceTo("2026-03-02T08:00:00Z");
    expect(runs.map((r) => r.scheduledFor)).toEqual([at("2026-03-02T08:00:00Z")]);
    await world.stop();
    // What a kill -9 in the middle of the 08:00 run leaves: the occurrence still under way.
    const underWay = "2026-03-02T08:00:00.000Z";
    await world.withState(async (store) => {
      const jobs = store.namespace("herald").namespace("jobs");
      await jobs.set("hourly", {
        lastRunAt: underWay,
        running: { scheduledFor: underWay, firedAt: underWay, catchUp: false },
      });
    });
    await world.advanceTo("2026-03-02T08:20:00Z");
    await world.start(setup);
    await world.clock.tick(0);
    expect(runs.slice(1)).toEqual([
      {
        id: "hourly",
        expression: "0 * * * *",
        scheduledFor: at(underWay),
        firedAt: at(underWay),
        catchUp: false,
      },
    ]);
    expect(
      world.logs.filter((l) => String(l.msg).startsWith("a cron job's run was cut short")),
    ).toMatchObject([{ level: 40, job: "hourly", scheduledFor: underWay }]);
    await world.advanceTo("2026-03-02T09:00:00Z");
    expect(runs.slice(2).map((r) => r.scheduledFor)).toEqual([at("2026-03-02T09:00:00Z")]);
    await world.stop();
    // Done with: the next start runs nothing again.
    await world.withState(async (store) => {
      const jobs = store.namespace("herald").namespace("jobs");
      expect(await jobs.get("hourly")).toEqual({ lastRunAt: "2026-03-02T09:00:00.000Z" });
    });
  });

  it("a weekly run cut short after its send, resumed two days later, sends and writes nothing twice", async () => {
    // The store's records expire by the test clock: a day and more down outlives the bot's default.
    world = await createWorld("2026-03-02T07:00:00Z", { expiry: "clock" });
    let done = 0;
    const setup = (bot: BotApi) => {
      bot.cron("0 8 * * 1", { id: "weekly" }, async (ctx) => {
        await ctx.state.update<number>("reports", (n) => (n ?? 0) + 1);
        await ctx.send({ type: "channel", to: "general", topic: "week", content: "Weekly report" });
        done++;
      });
    };
    await world.start(setup);
    await world.advanceTo("2026-03-02T08:00:00Z");
    await expect.poll(() => done).toBe(1);
    await world.stop();
    // What a kill -9 after the send and before the run was done with leaves: the occurrence under way.
    const underWay = "2026-03-02T08:00:00.000Z";
    await world.withState(async (store) => {
      const running = { scheduledFor: underWay, firedAt: underWay, catchUp: false };
      await store.namespace("herald").namespace("jobs").set("weekly", { lastRunAt: underWay, running });
    });
    await world.clock.tick(2 * 86_400_000);
    await world.start(setup);
    await world.clock.tick(0);
    await expect.poll(() => done).toBe(2);
    expect(world.sent().map((m) => m.content)).toEqual(["Weekly report"]);
    await world.stop();
    await world.withState(async (store) => {
      expect(await store.namespace("herald").namespace("kv").get("reports")).toBe(1);
    });
  });

  it("a run cut short, then a later occurrence missed while down: the missed-run policy decides", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runs: Run[] = [];
    const setup = (bot: BotApi) => {
      bot.cron("0 * * * *", { id: "once", missed: "run-once" }, (ctx) => void runs.push(ctx.job));
      bot.cron("0 * * * *", { id: "skip" }, (ctx) => void runs.push(ctx.job));
    };
    await world.start(setup);
    await world.clock.tick(0);
    await world.stop();
    const underWay = "2026-03-02T08:00:00.000Z";
    await world.withState(async (store) => {
      const jobs = store.namespace("herald").namespace("jobs");
      for (const id of ["once", "skip"]) {
        const running = { scheduledFor: underWay, firedAt: underWay, catchUp: false };
        await jobs.set(id, { lastRunAt: underWay, running });
      }
    });
    await world.advanceTo("2026-03-02T10:30:00Z"); // down over 09:00 and 10:00
    await world.start(setup);
    await world.clock.tick(0);
    expect(runs.map((r) => [r.id, r.scheduledFor, r.catchUp])).toEqual([
      ["once", at("2026-03-02T10:00:00Z"), true],
    ]);
    expect(world.logs.filter((l) => l.msg === "cron job missed while down; skipped")).toMatchObject([
      { job: "skip", scheduledFor: "2026-03-02T10:00:00.000Z" },
    ]);
    // Both policies' decisions are said, the catch-up too.
    expect(
      world.logs.filter((l) => l.msg === "cron job missed while down; running it once now"),
    ).toMatchObject([{ job: "once", scheduledFor: "2026-03-02T10:00:00.000Z" }]);
    expect(
      world.logs
        .filter((l) => String(l.msg).includes("a later occurrence has passed since"))
        .map((l) => l.job),
    ).toEqual(["once", "skip"]);
  });

  it("a job's first start ever, after its time of day, catches nothing up", async () => {
    world = await createWorld("2026-06-01T09:30:00Z");
    const runs: Run[] = [];
    const runtime = await world.start((bot) => {
      bot.cron("0 9 * * *", { id: "once", missed: "run-once" }, (ctx) => void runs.push(ctx.job));
      bot.cron("0 9 * * *", { id: "skip" }, (ctx) => void runs.push(ctx.job));
    });
    await world.clock.tick(0);
    expect(runs).toEqual([]);
    expect(world.logs.filter((l) => l.msg === "cron job missed while down; skipped")).toEqual([]);
    expect(runtime.scheduler.jobs().map((j) => j.nextRunAt?.toISOString())).toEqual([
      "2026-06-02T09:00:00.000Z",
      "2026-06-02T09:00:00.000Z",
    ]);
  });

  it("started inside a DST change's window: no second run in autumn, the shifted run in spring", async () => {
    // 02:30 Berlin: 00:30Z (CEST) and again 01:30Z (CET) on 25 October; on 29 March it does not
    // exist and is shifted to 03:30 CEST (01:30Z).
    world = await createWorld("2026-10-25T00:29:00Z");
    const runs: Run[] = [];
    const setup = (bot: BotApi) => {
      bot.cron("30 2 * * *", { id: "night", timezone: "Europe/Berlin" }, (ctx) => void runs.push(ctx.job));
    };
    await world.start(setup);
    await world.advanceTo("2026-10-25T00:31:00Z");
    await world.stop();
    await world.advanceTo("2026-10-25T01:29:45Z"); // 02:29:45 CET: the hour is repeated
    const runtime = await world.start(setup);
    expect(runtime.scheduler.jobs().map((j) => j.nextRunAt?.toISOString())).toEqual([
      "2026-10-26T01:30:00.000Z",
    ]);
    await world.advanceTo("2026-10-25T03:00:00Z");
    expect(runs.map((r) => r.scheduledFor)).toEqual([at("2026-10-25T00:30:00Z")]);
    await world.dispose();

    world = await createWorld("2026-03-29T01:29:40Z"); // 03:29:40 CEST, just after the gap
    const spring: Run[] = [];
    await world.start((bot) => {
      bot.cron("30 2 * * *", { id: "night", timezone: "Europe/Berlin" }, (ctx) => void spring.push(ctx.job));
    });
    await world.advanceTo("2026-03-29T02:00:00Z");
    expect(spring.map((r) => [r.scheduledFor, r.catchUp])).toEqual([[at("2026-03-29T01:30:00Z"), false]]);
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
