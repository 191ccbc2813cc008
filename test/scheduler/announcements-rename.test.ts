/**
 * An announcement's channel renamed while the bot runs: the server's `stream` update event (as the
 * sandbox sends it to everyone who can see the channel) drops the old name from the bot's cache,
 * so the next booking looks the name up again and fails naming the channel, as it would at a
 * restart, instead of booking the renamed channel. A warning names the setting at once. The
 * shipped announcements bot imports "bothost", which resolves to dist/: run `npm run build` first.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { definition, settings } from "../support/announcements-bot.ts";
import { createWorld, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const standup = {
  id: "standup",
  cron: "0 9 * * *",
  timezone: "UTC",
  channel: "general",
  topic: "standup",
  content: "Standup in 5 minutes",
};

const lookups = () =>
  world.sandbox.control.requests.filter((r) => r.method === "GET" && r.path === "/get_stream_id").length;

describe("an announcement whose channel is renamed while the bot runs", () => {
  it("fails its next booking naming the channel, and books nothing in the renamed channel", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    await world.start(definition, settings([standup]));
    expect(world.pending()).toHaveLength(1);
    const asked = lookups();
    // A day's booking when nothing changed costs no lookup.
    await world.advanceTo("2026-03-02T09:01:00Z");
    await expect.poll(() => world.pending()).toHaveLength(1);
    expect(lookups()).toBe(asked);
    // An administrator renames the channel, as PATCH /streams/{id} does.
    const admin = createClient({
      url: world.sandbox.url,
      email: "owner@sandbox.example",
      apiKey: world.sandbox.control.apiKeyOf("owner@sandbox.example"),
    });
    const { stream_id: id } = await admin.channels.id("general");
    await admin.request("PATCH", `/streams/${id}`, { new_name: "lobby" });
    const renamed = () => world.logs.filter((l) => String(l.msg).includes('"general" names no channel now'));
    await expect.poll(() => renamed().length).toBe(1);
    expect(renamed()[0]).toMatchObject({
      level: 40,
      settings: ["bots.herald.settings.announcements[0].channel"],
    });
    // The booking made before the rename goes out (the server keeps it by the channel's id); the
    // next one is not made: the name names no channel any more.
    await world.advanceTo("2026-03-03T09:01:00Z");
    // A mistake of the config now: said at warn, its reason without a stack.
    const failed = () =>
      world.logs.filter((l) =>
        String(l.reason).includes(
          'announcement "standup": "to" names no channel this bot can see: "general". The channel was renamed "lobby" on the server: name it so, or by its id,',
        ),
      );
    await expect.poll(() => failed().length).toBeGreaterThan(0);
    expect(failed()[0]).toMatchObject({ level: 40, code: "SCHEDULE_INVALID" });
    expect(failed()[0]).not.toHaveProperty("err");
    expect(world.pending()).toEqual([]);
    expect(world.sent().map((m) => m.stream_id)).toEqual([id, id]);
  });
});
