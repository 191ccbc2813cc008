/**
 * The announcements bot (bots/announcements.ts) under `bothost run`, one announcement with a
 * dated topic, killed (kill -9) at the crash points of its bookings: a booking made on the server,
 * its id not yet recorded (`booking-posted`); an occurrence recorded as sent, the next not yet
 * booked (`booking-settled`); a reload that changed the schedule, the old booking deleted and the
 * new one not yet made (`booking-replaced`); a reload that changed the text, the booking updated
 * and its record not yet written (`booking-edited`); and down while the server sends. Started
 * again on the same state (file store, and Redis when one answers), the server holds exactly one
 * booking, the one the config gives, each occurrence goes out once, and `bothost status` names the
 * booked occurrence.
 *
 * The daemon runs on the real clock; the sandbox's clock is moved to the whole-minute check that
 * sends an occurrence. The announcement goes out at two minutes of the hour, m1 (at least 30 s
 * ahead of the test's start) and m1 + 2, so each is still ahead when it is booked.
 */
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { casesOn, crashBackends } from "../support/crash-backends.ts";
import { announcementsBot, ANNOUNCE_BOT as BOT, useShippedBots } from "../support/shipped-bot.ts";

const TEXT = "Standup in 5 minutes :coffee:";

useShippedBots();
const backends = await crashBackends("announcements-crash-points");

async function setUp(state: (dir: string) => string) {
  const m1 = Math.ceil((Date.now() + 20_000) / 60_000) * 60_000;
  const minutes = [0, 2].map((k) => new Date(m1 + k * 60_000).getUTCMinutes()).join(",");
  const bot = await announcementsBot(
    [
      "announcements:",
      "  - id: standup",
      `    cron: "10 ${minutes} * * * *"`,
      "    channel: team",
      '    topic: "standup {{time}}"',
      `    content: "${TEXT}"`,
    ],
    state,
  );
  const { sandbox } = bot;
  const botId = sandbox.control.users().find((u) => u.email === BOT)!.user_id;
  /** `<topic> <content> +<minutes after m1>:<seconds>` */
  const shown = (topic: unknown, content: unknown, atMs: number) => {
    const at = atMs - m1;
    return `${topic} ${content} +${Math.floor(at / 60_000)}:${(at % 60_000) / 1000}`;
  };
  /** The bot's bookings still to go out. */
  const pending = () =>
    sandbox.control
      .scheduled()
      .filter((s) => s.sender_id === botId && s.delivered === false)
      .map((s) => shown(s.topic, s.content, (s.scheduled_delivery_timestamp as number) * 1000));
  /** What the bot posted, oldest first, each at the minute the server sent it. */
  const posted = () =>
    sandbox.control
      .messages()
      .filter((m) => m.sender_id === botId)
      .map((m) => shown(m.topic, m.content, (m.timestamp as number) * 1000));
  /** Occurrence `k` (0: m1, 1: m1 + 2) as booked, with `text` at second `second`. */
  const booking = (k: 0 | 1, text = TEXT, second = 10) => {
    const at = new Date(m1 + 2 * k * 60_000 + second * 1000);
    const hhmm = at.toISOString().slice(11, 16);
    return shown(`standup ${hhmm}`, text, at.getTime());
  };
  /** Occurrence `k` as sent: at the whole-minute check after it. */
  const sent = (k: 0 | 1, text = TEXT, second = 10) =>
    booking(k, text, second).replace(/\+(\d+):\d+$/, (_m, min) => `+${Number(min) + 1}:0`);
  /** Move the sandbox's clock to the whole-minute check that sends occurrence `k`. */
  const send = (k: 0 | 1) => sandbox.control.advanceClock(m1 + (2 * k + 1) * 60_000 - sandbox.control.now());
  /** Change the settings as an operator's edit, and ask the daemon to reload. */
  const reload = async (from: string, to: string) => {
    const text = await readFile(bot.config, "utf8");
    await writeFile(bot.config, text.replace(from, to));
    return runCli(["reload", "--config", bot.config], { env: bot.env });
  };
  /** `bothost status`'s next run: the booked occurrence's time. */
  const nextRun = async () => {
    const { stdout } = await runCli(["status", "--config", bot.config], { env: bot.env });
    return stdout.match(/standup (\S+Z)/)?.[1];
  };
  const iso = (k: 0 | 1, second = 10) =>
    new Date(m1 + 2 * k * 60_000 + second * 1000).toISOString().replace(".000Z", "Z");
  return { bot, pending, posted, booking, sent, send, reload, nextRun, iso };
}

const CASES = ["booking-posted", "booking-settled", "booking-replaced", "booking-edited", "down"] as const;

describe.each(backends)("on the %s", (name, backendFor) => {
  it.each(casesOn(name, CASES, (c) => c === "booking-replaced"))(
    "killed at %s: one booking on the server, each occurrence sent once",
    { timeout: 60_000 },
    async (point) => {
      const t = await setUp((dir) => backendFor(dir).yaml);
      const armed: Record<string, string> = point === "down" ? {} : { BOTHOST_FAILPOINTS: point };
      const first = point === "booking-posted" ? t.bot.launch(armed) : await t.bot.start(armed);
      // What the restart must find booked, and the text and second of occurrence 0.
      let text = TEXT;
      let second = 10;
      if (point !== "booking-posted")
        await expect.poll(t.pending, { timeout: 15_000 }).toEqual([t.booking(0)]);
      if (point === "booking-settled") t.send(0);
      if (point === "booking-replaced") {
        second = 40;
        await t.reload('cron: "10 ', 'cron: "40 ');
      }
      if (point === "booking-edited") {
        text = "Standup moved to the small room.";
        await t.reload(`content: "${TEXT}"`, `content: "${text}"`);
      }
      if (point === "down") first.kill("SIGKILL");
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
      if (point === "down") t.send(0);

      const daemon = await t.bot.start();
      const delivered = point === "booking-settled" || point === "down";
      const next = delivered ? t.booking(1, text, second) : t.booking(0, text, second);
      await expect.poll(t.pending, { timeout: 15_000 }).toEqual([next]);
      await expect.poll(t.nextRun, { timeout: 15_000 }).toBe(t.iso(delivered ? 1 : 0, second));
      if (!delivered) {
        t.send(0);
        await expect.poll(t.pending, { timeout: 15_000 }).toEqual([t.booking(1, text, second)]);
      }
      expect(t.posted()).toEqual([t.sent(0, text, second)]);
      t.send(1);
      await expect
        .poll(t.posted, { timeout: 15_000 })
        .toEqual([t.sent(0, text, second), t.sent(1, text, second)]);
      await expect.poll(t.pending, { timeout: 15_000 }).toHaveLength(1);
      daemon.kill("SIGTERM");
      await daemon.exited;
    },
  );
});
