/**
 * `ctx.schedule.at` under `bothost run`, killed (kill -9) right after the server's booking answer
 * and before its record is kept (crash point `schedule-booked`), and down while the server sends
 * the booking (a reminder a minute ahead). Started again on the same state, the handler runs again
 * and finds the message the booking became (the server lists it no more): `{ sentMessageId }`, one
 * message in the topic and no second booking.
 *
 * On the file store and on Redis (the restarted instance takes over the killed one's lease).
 *
 * The daemon runs on the real clock. The sandbox's is moved to the whole-minute check that sends
 * the booking, then put back to the daemon's: a server's clock runs with the daemon's, and one left
 * ahead would refuse a second booking as in the past rather than make it.
 */
import { describe, expect, it } from "vitest";
import { crashBackends, crashProject } from "../support/crash-backends.ts";
import { botSaid, orgWithBots, sayToBot, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("schedule-sent-crash");

const REMINDER = "Stand-up now!";
const BOT = `export default { events: ["message"], setup(bot) {
  bot.on("message", async (ctx) => {
    const booking = await ctx.schedule.at({
      to: "c0", topic: "reminders", content: ${JSON.stringify(REMINDER)}, at: ctx.now() + 60_000,
    });
    await ctx.reply(JSON.stringify(booking));
  });
} };\n`;

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("killed after the booking's answer, down while the server sends it: one message, no second booking", {
    timeout: 60_000,
  }, async () => {
    let behind = 0;
    const sandbox = await startE2eSandbox(orgWithBots(1), { clock: { now: () => Date.now() - behind } });
    const { control } = sandbox;
    const project = await crashProject(sandbox, backendFor, () => BOT, 3);
    const bookings = () => control.scheduled().filter((s) => s.delivered === false);
    const first = project.spawn({ BOTHOST_FAILPOINTS: "schedule-booked" });
    await first.waitForLog((l) => l.msg === "daemon started", 20_000);
    sayToBot(sandbox, "remind me");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    const [booked] = bookings();
    const at = (booked!.scheduled_delivery_timestamp as number) * 1000;
    // The server's check at the minute after the booking's time sends it; its clock then put back.
    const ahead = Math.ceil(at / 60_000) * 60_000 - control.now();
    control.advanceClock(ahead);
    behind = ahead;
    expect(bookings()).toEqual([]);
    expect(botSaid(sandbox)).toEqual([REMINDER]);

    const again = project.spawn();
    await expect.poll(() => botSaid(sandbox).length, { timeout: 20_000 }).toBe(2);
    const sent = control.messages().find((m) => m.content === REMINDER)!;
    expect(sent.topic).toBe("reminders");
    expect(botSaid(sandbox)).toEqual([REMINDER, `{"sentMessageId":${sent.id}}`]);
    expect(bookings()).toEqual([]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
