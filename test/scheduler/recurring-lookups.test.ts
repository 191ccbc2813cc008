/**
 * Announcements name their channel (or people) as ctx.schedule.at does, and resolve it as it
 * does: from the bot's caches when they know the name, not with a request per announcement at
 * each start and each booking. Public kit, sandbox over HTTP.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";

const test = createBotTest({ clock: { start: "2026-11-30T07:00:00Z" } });

const daily = defineBot({
  setup(bot) {
    for (const hour of [9, 10, 11, 12, 13]) {
      bot.recurring(`at-${hour}`, {
        cron: `0 ${hour} * * *`,
        timezone: "UTC",
        to: "general",
        topic: "daily",
        content: `It is ${hour}.`,
      });
    }
    bot.recurring("to-mel", {
      cron: "0 14 * * *",
      timezone: "UTC",
      to: ["member@sandbox.example"],
      content: "Hi Mel.",
    });
  },
});

test("six announcements to one channel and one person resolve the names once, not at each booking", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const from = sandbox.control.requests.length;
  const bot = await runBot({ bot: daily, name: "daily" });
  await expect.poll(() => sandbox.control.scheduled().length).toBe(6);
  await clock.advanceTo("2026-11-30T09:01:00Z"); // one delivered (kept, as sent), the next of it booked
  await expect.poll(() => sandbox.control.scheduled().length).toBe(7);
  const lookups = sandbox.control.requests
    .slice(from)
    .filter((r) => r.method === "GET" && /^\/(get_stream_id|streams|users\/)/.test(r.path))
    .map((r) => r.path);
  expect(lookups.filter((p) => p === "/get_stream_id").length).toBeLessThanOrEqual(1);
  expect(lookups.filter((p) => p.startsWith("/users/") && p !== "/users/me").length).toBeLessThanOrEqual(1);
  await bot.stop();
});
