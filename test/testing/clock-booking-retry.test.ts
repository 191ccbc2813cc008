/**
 * An advance waits for the booking step a retry timer starts, as it waits for a cron job's run:
 * an announcement whose booking failed at 07:00 is booked by the retry at 07:01, so an advance
 * from 07:00 past 08:00 sends the 08:00 occurrence, as a bot running through that hour would.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";

const test = createBotTest({ clock: { start: "2026-11-30T07:00:00Z", held: true } });

test("a booking retried during an advance books the occurrence the advance then passes", async ({
  runBot,
  clock,
}) => {
  let calls = 0;
  const daily = defineBot({
    setup(bot) {
      bot.recurring("daily", {
        cron: "0 8 * * *",
        timezone: "UTC",
        to: "general",
        topic: "daily",
        content: () => {
          calls++;
          if (calls === 1) throw new Error("the content source is not ready yet");
          return "Good morning";
        },
      });
    },
  });
  const bot = await runBot({ bot: daily, name: "daily" });
  await expect.poll(() => clock.pendingDelays()).toContain(60_000); // the retry, a minute out
  await clock.advanceTo("2026-11-30T08:01:00Z");
  const sent = bot.replies().map((m) => [new Date(m.timestamp * 1000).toISOString(), m.content]);
  expect(sent).toEqual([["2026-11-30T08:00:00.000Z", "Good morning"]]);
});
