/**
 * The announcements bot (bots/announcements.ts) under `bothost run`, down (kill -9) while the
 * server fails its booking (more than 10 minutes late) and sends the Notification Bot's note on
 * it. Started again, it moves the failed booking to go out in a minute, once, and logs the
 * server's reason from the note, caught up with the messages sent while it was down.
 *
 * The daemon runs on the real clock; the sandbox's is moved to its whole-minute check 11 minutes
 * after the occurrence, which fails the send, then put back to the daemon's (a server's clock runs
 * with the daemon's, and one left ahead would refuse the move as in the past).
 */
import { expect, it } from "vitest";
import { announcementsBot, ANNOUNCE_BOT as BOT, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();

it("down while the server failed its booking: moved once, and the note's reason logged at the next start", {
  timeout: 60_000,
}, async () => {
  let behind = 0;
  const m1 = Math.ceil((Date.now() + 20_000) / 60_000) * 60_000;
  const minute = new Date(m1).getUTCMinutes();
  const bot = await announcementsBot(
    [
      "announcements:",
      "  - id: standup",
      `    cron: "10 ${minute} * * * *"`,
      "    channel: team",
      "    topic: standup",
      '    content: "Standup in 5 minutes :coffee:"',
    ],
    undefined,
    { clock: { now: () => Date.now() - behind } },
  );
  const { control } = bot.sandbox;
  const botId = control.users().find((u) => u.email === BOT)!.user_id;
  const bookings = () => control.scheduled().filter((s) => s.sender_id === botId && s.delivered === false);
  const first = await bot.start();
  await expect.poll(() => bookings().length, { timeout: 15_000 }).toBe(1);
  first.kill("SIGKILL");
  await first.exited;
  const ahead = m1 + 11 * 60_000 - control.now();
  control.advanceClock(ahead);
  behind = ahead;
  expect(bookings().map((s) => s.failed)).toEqual([true]);
  const note = control.messages().filter((m) => (m.dm_user_ids as number[] | undefined)?.includes(botId));
  expect(note.map((m) => String(m.content).slice(0, 29))).toEqual(["The message you scheduled for"]);

  const daemon = await bot.start();
  const occurrence = new Date(m1 + 10_000).toISOString();
  const lines = (msg: string) =>
    daemon
      .logs()
      .filter((l) => l.msg === msg)
      .map((l) => `${l.announcement} ${l.occurrence} ${l.reason ?? ""}`.trim());
  await expect
    .poll(() => lines("the server's reason the announcement was not sent"), { timeout: 15_000 })
    .toEqual([`standup ${occurrence} Message could not be sent at the scheduled time.`]);
  expect(
    lines("the server did not send the announcement; rescheduled it to go out in a minute (once)"),
  ).toEqual([`standup ${occurrence}`]);
  expect(bookings().map((s) => s.failed)).toEqual([false]);
  daemon.kill("SIGTERM");
  await daemon.exited;
});
