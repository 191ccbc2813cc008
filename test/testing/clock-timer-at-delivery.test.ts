/**
 * A timer of the bot due at the very minute a scheduled message goes out (a cron job and a
 * recurring announcement at the same time) does not make the advance pass that delivery: the
 * sandbox sends the message at its minute, not at the end of the advance, days late and failed.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";

const test = createBotTest({ clock: { start: "2026-11-30T07:00:00Z" } });

test("a cron job and an announcement due at the same minute both go out on an advance of days", async ({
  runBot,
  clock,
}) => {
  const both = defineBot({
    setup(bot) {
      bot.cron("0 8 * * *", (ctx) =>
        ctx.send({
          type: "channel",
          to: "general",
          topic: "job",
          content: ctx.job.scheduledFor.toISOString(),
        }),
      );
      bot.recurring("daily", {
        cron: "0 8 * * *",
        timezone: "UTC",
        to: "general",
        topic: "daily",
        content: "Good morning",
      });
    },
  });
  const bot = await runBot({ bot: both, name: "both" });
  await clock.advanceTo("2026-12-02T09:00:00Z");
  const sent = bot
    .replies()
    .map((m) => `${m.type === "stream" ? m.subject : ""} ${new Date(m.timestamp * 1000).toISOString()}`)
    .sort();
  expect(sent).toEqual([
    "daily 2026-11-30T08:00:00.000Z",
    "daily 2026-12-01T08:00:00.000Z",
    "daily 2026-12-02T08:00:00.000Z",
    "job 2026-11-30T08:00:00.000Z",
    "job 2026-12-01T08:00:00.000Z",
    "job 2026-12-02T08:00:00.000Z",
  ]);
  expect(bot.logs().filter((l) => (l.level as number) >= 50)).toEqual([]);
});
