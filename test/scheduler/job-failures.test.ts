/**
 * Cron jobs fail like events do: a job that throws runs again after a pause, repeating none of
 * the messages it had sent; one that fails every attempt (or throws NoRetry) is kept as a dead
 * letter, and an operator's retry runs the job's occurrence again once the cause is fixed. Its
 * ctx.state writes apply once per occurrence, and so do its ctx.external calls (retried, replayed
 * or run again after a crash, it gets the first result).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { STORE_OUTAGE_LINE } from "../../src/pipeline/handler-failures.ts";
import { StateError } from "../../src/state/state-error.ts";
import { createWorld, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const RETRIES = "    retries: { attempts: 3, backoff: 1s, max_backoff: 1s }";
const contents = () => world.sent().map((m) => m.content);
const retriesLogged = () =>
  world.logs.filter((l) => l.msg === "handler failed; running it again after a pause");

/** A job "digest" every five minutes that posts `first`, then throws what `fail` says, then posts `second`. */
function digestBot(fail: (run: number) => Error | undefined) {
  let runs = 0;
  const setup = (bot: BotApi) => {
    bot.cron("*/5 * * * *", { id: "digest" }, async (ctx) => {
      runs++;
      const at = ctx.job.scheduledFor.toISOString();
      await ctx.send({ type: "channel", to: "general", topic: "digest", content: `first ${at}` });
      const error = fail(runs);
      if (error) throw error;
      await ctx.send({ type: "channel", to: "general", topic: "digest", content: `second ${at}` });
    });
  };
  return { setup, runs: () => runs };
}

/** Let the clock run past each retry pause as it is taken. */
async function throughRetries(pauses: number): Promise<void> {
  for (let i = 1; i <= pauses; i++) {
    await expect.poll(() => retriesLogged().length).toBe(i);
    await world.clock.tick(1_000);
  }
}

describe("a cron job that throws", () => {
  it("runs again after a pause, and the message it had sent is not sent again", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: RETRIES });
    const bot = digestBot((run) => (run < 3 ? new Error("upstream down") : undefined));
    await world.start(bot.setup);
    await world.advanceTo("2026-03-02T07:05:00Z");
    await throughRetries(2);
    await expect
      .poll(contents)
      .toEqual(["first 2026-03-02T07:05:00.000Z", "second 2026-03-02T07:05:00.000Z"]);
    expect(bot.runs()).toBe(3);
    expect(world.logs.filter((l) => l.msg === "cron job failed")).toMatchObject([
      { job: "digest", scheduledFor: "2026-03-02T07:05:00.000Z", err: { message: "upstream down" } },
    ]);
    await expect
      .poll(() => world.logs.filter((l) => l.msg === "handler succeeded on a later attempt"))
      .toHaveLength(1);
  });

  it("whose send's answer was lost: the run again finds it though the server's clock is a little behind", async () => {
    // The server's clock 200 ms behind the daemon's: the message it stored at the firing carries
    // the second before the one the daemon fired in.
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: RETRIES, serverBehindMs: 200 });
    const bot = digestBot(() => undefined);
    await world.start(bot.setup);
    world.sandbox.control.failNext(1, {
      status: 502,
      after: true,
      paths: [/^\/messages$/],
      methods: ["POST"],
    });
    await world.advanceTo("2026-03-02T07:05:00Z");
    await throughRetries(1);
    await expect.poll(() => bot.runs()).toBe(2);
    await expect
      .poll(() => world.logs.filter((l) => l.msg === "handler succeeded on a later attempt"))
      .toHaveLength(1);
    expect(contents()).toEqual(["first 2026-03-02T07:05:00.000Z", "second 2026-03-02T07:05:00.000Z"]);
  });

  it("is kept as a dead letter after the last attempt, and a retry once fixed sends only what was missing", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: RETRIES });
    let broken = true;
    const bot = digestBot(() => (broken ? new Error("upstream down") : undefined));
    const runtime = await world.start(bot.setup);
    await world.advanceTo("2026-03-02T07:05:00Z");
    await throughRetries(2);
    const letters = () => world.withDaemon((d) => d.letters.list());
    await expect.poll(async () => (await letters()).length).toBe(1);
    const [letter] = await letters();
    expect(letter).toMatchObject({
      id: "herald/1",
      source: "job",
      attempts: 3,
      error: { message: "upstream down" },
      event: { type: "cron_job", job: "digest", scheduledFor: "2026-03-02T07:05:00.000Z", catchUp: false },
      effects: [{ n: 1, kind: "send" }],
    });
    expect(runtime.scheduler.stats.jobErrors).toBe(1);
    expect(contents()).toEqual(["first 2026-03-02T07:05:00.000Z"]);

    broken = false;
    await world.withDaemon((d) => d.letters.retry({ ids: [letter!.id] }));
    // A retry through the daemon reaches the running bot at once: no clock move.
    await expect.poll(async () => (await letters()).length).toBe(0);
    expect(contents()).toEqual(["first 2026-03-02T07:05:00.000Z", "second 2026-03-02T07:05:00.000Z"]);
    expect(bot.runs()).toBe(4);
  });

  it("failed by a state store outage: logged as the outage (no stack, no job error), run again", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: RETRIES });
    const outage = new StateError("STATE_UNAVAILABLE", "Redis did not answer (a test's outage)");
    const bot = digestBot((run) => (run < 2 ? outage : undefined));
    await world.start(bot.setup);
    await world.advanceTo("2026-03-02T07:05:00Z");
    const again = `${STORE_OUTAGE_LINE}; running it again after a pause`;
    await expect.poll(() => world.logs.filter((l) => l.msg === again).length).toBe(1);
    await world.clock.tick(1_000);
    await expect
      .poll(contents)
      .toEqual(["first 2026-03-02T07:05:00.000Z", "second 2026-03-02T07:05:00.000Z"]);
    const said = { code: "STATE_UNAVAILABLE", reason: outage.message };
    expect(world.logs.filter((l) => String(l.msg).startsWith(STORE_OUTAGE_LINE))).toEqual([
      expect.objectContaining({ level: 40, msg: STORE_OUTAGE_LINE, job: "digest", ...said }),
      expect.objectContaining({ level: 40, msg: again, ...said }),
    ]);
    expect(
      world.logs.filter((l) => (l.level as number) >= 40 && ("err" in l || l.msg === "cron job failed")),
    ).toEqual([]);
  });

  it("throwing NoRetry is kept as a dead letter at once", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: RETRIES });
    const bot = digestBot(() => new NoRetry("the digest source is gone"));
    await world.start(bot.setup);
    await world.advanceTo("2026-03-02T07:05:00Z");
    await expect.poll(async () => (await world.withDaemon((d) => d.letters.list())).length).toBe(1);
    expect(await world.withDaemon((d) => d.letters.list())).toMatchObject([
      { source: "job", attempts: 1, error: { name: "NoRetry" } },
    ]);
    expect(bot.runs()).toBe(1);
    expect(retriesLogged()).toEqual([]);
  });

  it("applies its ctx.state writes once per occurrence, however often it runs; immediate ones each run", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: RETRIES });
    let runs = 0;
    await world.start((bot) => {
      bot.cron("*/5 * * * *", { id: "tally" }, async (ctx) => {
        runs++;
        await ctx.state.immediate.update<number>("runs", (n) => (n ?? 0) + 1);
        const count = await ctx.state.update<number>("count", (n) => (n ?? 0) + 1);
        if (runs < 3) throw new Error("not yet");
        await ctx.send({ type: "channel", to: "general", topic: "tally", content: `count ${count}` });
      });
    });
    await world.advanceTo("2026-03-02T07:05:00Z");
    await throughRetries(2);
    await expect.poll(contents).toEqual(["count 1"]);
    await expect
      .poll(() => world.logs.filter((l) => l.msg === "handler succeeded on a later attempt"))
      .toHaveLength(1);
    await world.stop();
    await world.withState(async (store) => {
      const kv = store.namespace("herald").namespace("kv");
      expect(await kv.get("count")).toBe(1);
      expect(await kv.get("runs")).toBe(3);
    });
  });

  it("a first attempt past handler_timeout is cut too: its signal aborted, said, then retried", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: `${RETRIES}\n    handler_timeout: 1s` });
    let runs = 0;
    await world.start((bot: BotApi) => {
      bot.cron("*/5 * * * *", { id: "digest" }, async (ctx) => {
        if (++runs > 1) return;
        const { signal } = ctx;
        await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      });
    });
    await world.advanceTo("2026-03-02T07:05:00Z");
    await expect.poll(() => runs).toBe(1);
    await world.clock.tick(1_000);
    const timedOut = () => world.logs.filter((l) => String(l.msg).includes("handler timed out"));
    await expect.poll(timedOut).toMatchObject([
      {
        job: "digest",
        scheduledFor: "2026-03-02T07:05:00.000Z",
        attempt: 1,
        msg: "handler timed out; its signal was aborted",
      },
    ]);
    await throughRetries(1);
    await expect.poll(() => runs).toBe(2);
  });

  it("a later attempt cut by handler_timeout says so, naming the job, its occurrence and the attempt", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: `${RETRIES}\n    handler_timeout: 1s` });
    let runs = 0;
    await world.start((bot: BotApi) => {
      bot.cron("*/5 * * * *", { id: "digest" }, async (ctx) => {
        if (++runs === 1) throw new Error("upstream down");
        const { signal } = ctx;
        await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      });
    });
    await world.advanceTo("2026-03-02T07:05:00Z");
    await throughRetries(1);
    await expect.poll(() => runs).toBe(2);
    await world.clock.tick(1_000);
    const timedOut = () => world.logs.filter((l) => String(l.msg).includes("handler timed out"));
    await expect.poll(timedOut).toMatchObject([
      {
        job: "digest",
        scheduledFor: "2026-03-02T07:05:00.000Z",
        attempt: 2,
        msg: expect.stringContaining("later attempt"),
      },
    ]);
  });
});

describe("a cron job's ctx.external", () => {
  /** A job "tickets" (every five minutes) that opens a ticket (counted), then fails while `broken()`, then posts it. */
  function ticketBot(broken: () => Error | undefined, schedule = "*/5 * * * *") {
    let calls = 0;
    const setup = (bot: BotApi) => {
      bot.cron(schedule, { id: "tickets" }, async (ctx) => {
        const ticket = await ctx.external("open ticket", () => ({ id: ++calls }));
        const error = broken();
        if (error) throw error;
        await ctx.send({ type: "channel", to: "general", topic: "tickets", content: `ticket ${ticket.id}` });
      });
    };
    return { setup, calls: () => calls };
  }

  it("is called once per occurrence across its retries and its dead letter's replay; the next occurrence calls again", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: RETRIES });
    let fixed = false;
    const bot = ticketBot(() => (fixed ? undefined : new Error("the tracker answered, then a bug")));
    await world.start(bot.setup);
    await world.advanceTo("2026-03-02T07:05:00Z");
    await throughRetries(2);
    const letters = () => world.withDaemon((d) => d.letters.list());
    await expect.poll(async () => (await letters()).length).toBe(1);
    expect(bot.calls()).toBe(1);

    fixed = true;
    await world.withDaemon(async (d) => d.letters.retry({ all: true }));
    await expect.poll(async () => (await letters()).length).toBe(0);
    expect(contents()).toEqual(["ticket 1"]);
    await world.advanceTo("2026-03-02T07:10:00Z");
    await expect.poll(contents).toEqual(["ticket 1", "ticket 2"]);
    expect(bot.calls()).toBe(2);
  });

  it("replayed from its dead letter after the effect records expired, is not called again", async () => {
    world = await createWorld("2026-03-02T06:59:00Z", { botSettings: RETRIES, expiry: "clock" });
    let fixed = false;
    const bot = ticketBot(
      () => (fixed ? undefined : new Error("the tracker answered, then a bug")),
      "0 7 * * *",
    );
    await world.start(bot.setup);
    await world.advanceTo("2026-03-02T07:00:00Z");
    await throughRetries(2);
    const letters = () => world.withDaemon((d) => d.letters.list());
    await expect.poll(async () => (await letters()).length).toBe(1);
    // Past the records' 25 hours (the daemon stopped meanwhile: no firing, no timer to run).
    await world.stop();
    await world.clock.tick(26 * 3_600_000);
    await world.start(bot.setup);
    fixed = true;
    await world.withDaemon(async (d) => d.letters.retry({ all: true }));
    await expect.poll(async () => (await letters()).length).toBe(0);
    expect(contents()).toEqual(["ticket 1"]);
    expect(bot.calls()).toBe(1);
  });

  it("a run cut short after the call (its process killed) runs again and gets the first result", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    let first = true;
    // The first process's run ends after the call, sending nothing and keeping no dead letter.
    const bot = ticketBot(() => (first ? new NoRetry("cut here", { deadLetter: false }) : undefined));
    await world.start(bot.setup);
    await world.advanceTo("2026-03-02T07:05:00Z");
    await expect.poll(bot.calls).toBe(1);
    await world.stop();
    // What a kill -9 after the call's record was committed leaves: the occurrence still under way.
    const underWay = "2026-03-02T07:05:00.000Z";
    await world.withState(async (store) => {
      const running = { scheduledFor: underWay, firedAt: underWay, catchUp: false };
      await store.namespace("herald").namespace("jobs").set("tickets", { lastRunAt: underWay, running });
    });
    first = false;
    await world.start(bot.setup);
    await world.clock.tick(0);
    await expect.poll(contents).toEqual(["ticket 1"]);
    expect(bot.calls()).toBe(1);
  });
});
