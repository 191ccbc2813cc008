/**
 * A bot in webhook mode gets no `scheduled_messages` events: it learns that a booking was sent only
 * by looking at the server's bookings. It looks two minutes after each booking's time, so an
 * announcement due every five minutes has each occurrence booked before it is due.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";

const test = createBotTest({ clock: { start: "2026-11-30T07:00:30Z" } });

test("an announcement every five minutes goes out at each occurrence in webhook mode", async ({
  runBot,
  clock,
}) => {
  const ticks = defineBot({
    setup(bot) {
      bot.recurring("tick", {
        cron: "*/5 * * * *",
        timezone: "UTC",
        to: "general",
        topic: "ticks",
        content: "tick",
      });
    },
  });
  const bot = await runBot({ bot: ticks, name: "ticks", outgoingWebhook: true });
  await clock.advanceTo("2026-11-30T07:31:00Z");
  const sent = bot.replies().map((m) => new Date(m.timestamp * 1000).toISOString().slice(11, 16));
  expect(sent).toEqual(["07:05", "07:10", "07:15", "07:20", "07:25", "07:30"]);
  expect(bot.logs().filter((l) => (l.level as number) >= 50)).toEqual([]);
});
