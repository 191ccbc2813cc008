/**
 * A deployed cron job without an id (its history stored under its expression and time zone) that
 * a new version gives an `id`: the history is read from the old key while the id has none, so the
 * upgrade keeps its missed-run policy, its run cut short, and its dead letters.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { JobContext } from "../../src/pipeline/context.ts";
import type { StateStore } from "../../src/state/state-store.ts";
import { createWorld, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const at = (iso: string) => new Date(iso);
/** Read or write the bot's cron jobs' records (the daemon stopped). */
const jobs = (fn: (store: StateStore) => Promise<void>) =>
  world.withState((store) => fn(store.namespace("herald").namespace("jobs")));

describe("a cron job given an id in a new version", () => {
  it("keeps its last run: an occurrence missed at the upgrade is caught up with run-once", async () => {
    world = await createWorld("2026-03-02T08:30:00Z");
    const runs: JobContext["job"][] = [];
    const version = (id?: string) => (bot: BotApi) => {
      const options = { missed: "run-once" as const, ...(id ? { id } : {}) };
      bot.cron("0 9 * * *", options, (ctx) => void runs.push(ctx.job));
    };
    await world.start(version());
    await world.advanceTo("2026-03-02T09:00:00Z");
    await world.stop();
    await world.advanceTo("2026-03-03T09:30:00Z"); // down over the next day's 09:00
    await world.start(version("daily"));
    await world.clock.tick(0);
    expect(runs.map((r) => [r.id, r.scheduledFor, r.catchUp])).toEqual([
      ["0 9 * * * UTC", at("2026-03-02T09:00:00Z"), false],
      ["daily", at("2026-03-03T09:00:00Z"), true],
    ]);
    await world.stop();
    await jobs(async (store) => {
      expect(await store.get("daily")).toEqual({ lastRunAt: "2026-03-03T09:30:00.000Z" });
    });
  });

  it("takes up a run cut short under the old key: nothing sent or written twice", async () => {
    world = await createWorld("2026-03-02T07:00:00Z", { expiry: "clock" });
    const ids: string[] = [];
    const version = (id?: string) => (bot: BotApi) => {
      bot.cron("0 8 * * 1", id ? { id } : {}, async (ctx) => {
        await ctx.state.update<number>("reports", (n) => (n ?? 0) + 1);
        await ctx.send({ type: "channel", to: "general", topic: "week", content: "Weekly report" });
        ids.push(ctx.job.id);
      });
    };
    await world.start(version());
    await world.advanceTo("2026-03-02T08:00:00Z");
    await expect.poll(() => ids).toEqual(["0 8 * * 1 UTC"]);
    await world.stop();
    // What a kill -9 after the send and before the run was done with leaves: the occurrence under way.
    const underWay = "2026-03-02T08:00:00.000Z";
    await jobs(async (store) => {
      const running = { scheduledFor: underWay, firedAt: underWay, catchUp: false };
      await store.set("0 8 * * 1 UTC", { lastRunAt: underWay, running });
    });
    await world.clock.tick(86_400_000);
    await world.start(version("weekly"));
    await world.clock.tick(0);
    // Run again as the occurrence it was (its effects are recorded under that name).
    await expect.poll(() => ids).toEqual(["0 8 * * 1 UTC", "0 8 * * 1 UTC"]);
    expect(world.sent().map((m) => m.content)).toEqual(["Weekly report"]);
    await world.stop();
    await world.withState(async (store) => {
      expect(await store.namespace("herald").namespace("kv").get("reports")).toBe(1);
      expect(await store.namespace("herald").namespace("jobs").get("weekly")).toEqual({
        lastRunAt: underWay,
      });
    });
  });

  it("replays a dead letter of the old key", async () => {
    const RETRIES = "    retries: { attempts: 1 }";
    world = await createWorld("2026-03-02T07:00:00Z", { botSettings: RETRIES });
    let broken = true;
    const version = (id?: string) => (bot: BotApi) => {
      bot.cron("*/5 * * * *", id ? { id } : {}, async (ctx) => {
        await ctx.send({ type: "channel", to: "general", topic: "digest", content: "first" });
        if (broken) throw new Error("upstream down");
        await ctx.send({ type: "channel", to: "general", topic: "digest", content: "second" });
      });
    };
    await world.start(version());
    await world.advanceTo("2026-03-02T07:05:00Z");
    const letters = () => world.withDaemon((d) => d.letters.list());
    await expect
      .poll(async () => (await letters()).map((l) => (l.event as { job?: string }).job))
      .toEqual(["*/5 * * * * UTC"]);
    await world.stop();
    broken = false;
    await world.start(version("digest"));
    const [letter] = await letters();
    await world.withDaemon((d) => d.letters.retry({ ids: [letter!.id] }));
    await expect.poll(async () => (await letters()).length).toBe(0);
    expect(world.sent().map((m) => m.content)).toEqual(["first", "second"]);
  });
});
