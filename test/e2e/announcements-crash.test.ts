/**
 * The announcements bot (bots/announcements.ts) under `bothost run`, configured as
 * docs/guide/scheduling.md shows (a text and a saved snippet), killed with SIGKILL at the moments
 * that matter: in the middle of its bookings (at start, and after a delivered batch when it books
 * the next occurrences), right after a booking's POST landed on the server and before the daemon
 * could read the reply (the sandbox kills it as it answers), and while a POST is held before the
 * server acted on it. A daemon started again on the same state books what is missing: the
 * channel sees each occurrence of each announcement once, in order.
 *
 * The daemon runs on the real clock, the sandbox's clock is moved ahead to the next whole-minute
 * check (where the server sends what is due): each announcement goes out at two chosen minutes of
 * the hour, a minute or two ahead of the test's start, so each round is due within two minutes
 * of real time and the next round is still ahead of the sandbox when it is booked.
 */
import { expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import type { CliProcess } from "../support/cli.ts";
import { announcementsBot, ANNOUNCE_BOT as BOT, postedBy, useShippedBots } from "../support/shipped-bot.ts";

const RULES = "Be kind. Keep topics on topic.";
/** What the channel reads for one round, in the order of the announcements' times. */
const ROUND = ["Standup in 5 minutes :coffee:", "Lunch at noon.", RULES] as const;

useShippedBots();

/** `lunch`: the lunch announcement's text (default {@link ROUND}'s). */
async function setUp(lunch: string = ROUND[1]) {
  // Round one at minute m1 (its :10 at least 30 s ahead), round two at m1 + 2; seconds 10, 20, 30.
  const m1Start = Math.ceil((Date.now() + 20_000) / 60_000) * 60_000;
  const minutes = [0, 2].map((k) => new Date(m1Start + k * 60_000).getUTCMinutes()).join(",");
  const bot = await announcementsBot([
    "announcements:",
    "  - id: standup",
    `    cron: "10 ${minutes} * * * *"`,
    "    timezone: Europe/Berlin",
    "    channel: team",
    "    topic: standup",
    `    content: "${ROUND[0]}"`,
    "  - id: lunch",
    `    cron: "20 ${minutes} * * * *"`,
    "    channel: team",
    "    topic: lunch",
    `    content: "${lunch}"`,
    "  - id: weekly-rules",
    `    cron: "30 ${minutes} * * * *"`,
    "    timezone: America/New_York",
    "    channel: team",
    "    topic: house rules",
    "    snippet: House rules",
  ]);
  const { sandbox } = bot;
  // The snippet is the bot account's own, as the docs say.
  const asBot = createClient({ url: sandbox.url, email: BOT, apiKey: sandbox.control.apiKeyOf(BOT) });
  await asBot.savedSnippets.create({ title: "House rules", content: RULES });
  const botId = sandbox.control.users().find((u) => u.email === BOT)!.user_id;
  /** What the channel shows from the bot, oldest first. */
  const posted = () => postedBy(sandbox, BOT);
  /** The bot's bookings still to go out, by time: `<content> @ <minute offset from m1>:<second>`. */
  const pending = () =>
    sandbox.control
      .scheduled()
      .filter((s) => s.sender_id === botId && s.delivered === false && s.failed === false)
      .map((s) => {
        const content = String(s.content);
        const shown = content.length > 100 ? `${content.slice(0, 10)}… (${content.length})` : content;
        const at = (s.scheduled_delivery_timestamp as number) * 1000 - m1Start;
        return `${shown} @ +${Math.floor(at / 60_000)}:${(at % 60_000) / 1000}`;
      })
      .sort();
  const booked = (round: 0 | 1) => ROUND.map((c, i) => `${c} @ +${2 * round}:${10 * (i + 1)}`).sort();
  /** Move the sandbox's clock to the whole-minute check that sends round `round`. */
  const sendRound = (round: 0 | 1) => {
    const check = m1Start + (2 * round + 1) * 60_000;
    sandbox.control.advanceClock(check - sandbox.control.now());
  };
  /** Do `act` as the sandbox answers the `n`-th booking POST from now (it landed; not yet read). */
  const atBooking = (n: number, act: () => void) => {
    let seen = 0;
    bot.onResponse = (r) => {
      if (r.method !== "POST" || r.route !== "/scheduled_messages" || ++seen < n) return;
      bot.onResponse = undefined;
      act();
    };
  };
  const killAtBooking = (n: number, daemon: CliProcess) => atBooking(n, () => daemon.kill("SIGKILL"));
  /** Hold every request to /scheduled_messages once the `n`-th booking POST from now was answered. */
  const holdAfterBooking = (n: number) =>
    atBooking(n, () => sandbox.control.delay(60_000, { paths: ["/scheduled_messages"] }));
  /**
   * A daemon started again goes on from round `from`: every announcement gets booked once, each
   * round is sent, and the channel reads both rounds once each, in order; the next hour's round
   * is booked, one booking each.
   */
  const restart = async (from: 0 | 1) => {
    const daemon = await bot.start();
    for (const round of from === 0 ? ([0, 1] as const) : ([1] as const)) {
      await expect.poll(pending, { timeout: 15_000 }).toEqual(booked(round));
      sendRound(round);
    }
    await expect.poll(posted, { timeout: 15_000 }).toEqual([...ROUND, ...ROUND]);
    await expect.poll(() => pending().length, { timeout: 15_000 }).toBe(3);
    return daemon;
  };
  const { launch, start } = bot;
  return {
    sandbox,
    launch,
    start,
    restart,
    posted,
    pending,
    booked,
    sendRound,
    killAtBooking,
    holdAfterBooking,
  };
}

it("killed as the server answers the second of the start's bookings: the restart adopts what landed and books the rest", {
  timeout: 60_000,
}, async () => {
  const { launch, restart, pending, booked, killAtBooking } = await setUp();
  const first = launch();
  killAtBooking(2, first);
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  // The start books a few announcements at once: the two answered, and any other whose POST
  // landed before the kill, each once.
  const landed = pending();
  expect(landed.length).toBeGreaterThanOrEqual(2);
  expect(booked(0)).toEqual(expect.arrayContaining(landed));

  const second = await restart(0);
  // The booking whose answer the kill cut was never recorded: found by its intent, not made again.
  expect(second.logs().map((l) => l.msg)).toContain("found the booking made just before a crash; adopted it");
});

it("killed in the middle of booking the next round after a delivered batch: each occurrence once, in order", {
  timeout: 60_000,
}, async () => {
  const { start, restart, posted, pending, booked, sendRound, killAtBooking } = await setUp();
  const first = await start();
  await expect.poll(pending, { timeout: 15_000 }).toEqual(booked(0));
  killAtBooking(2, first);
  sendRound(0);
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(posted()).toEqual(ROUND);
  expect(pending()).toEqual(booked(1).filter((b) => !b.startsWith(RULES)));

  await restart(1);
});

it("killed while a booking's POST is held before the server acted: the restart books it once", {
  timeout: 60_000,
}, async () => {
  const { sandbox, launch, restart, pending, booked, holdAfterBooking } = await setUp();
  holdAfterBooking(1);
  const first = launch();
  await sandbox.control.waitFor(() => sandbox.control.delayed() > 0, { timeoutMs: 15_000 });
  first.kill("SIGKILL");
  await first.exited;
  // The held POST reaches the server after its sender died and is refused: it never landed.
  sandbox.control.failNext(1, { status: 502, paths: ["/scheduled_messages"] });
  sandbox.control.delay(0);
  expect(pending()).toEqual(booked(0).filter((b) => b.startsWith(ROUND[0])));

  await restart(0);
});

it("an announcement longer than the server allows is refused, not booked cut short (which a kill after its POST would book twice)", {
  timeout: 60_000,
}, async () => {
  // The server cuts a longer message short ("[message truncated]"), so its copy of the booking is
  // not the one the intent record describes: a restart after the kill would book it again.
  const { launch, start, posted, pending, booked, sendRound, killAtBooking } = await setUp(
    "x".repeat(10_050),
  );
  const first = launch();
  killAtBooking(2, first);
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

  const second = await start();
  const others = booked(0).filter((b) => !b.startsWith(ROUND[1]));
  await expect.poll(pending, { timeout: 15_000 }).toEqual(others);
  sendRound(0);
  await expect.poll(posted, { timeout: 15_000 }).toEqual([ROUND[0], RULES]);
  // A mistake of the config: said at warn, without a stack.
  const said = second.logs().find((l) => l.announcement === "lunch" && l.code === "SCHEDULE_INVALID");
  expect(said).toMatchObject({
    level: 40,
    msg: expect.stringMatching(
      /^announcement "lunch" cannot be booked: .*10050 characters; the server allows 10000/,
    ),
  });
  expect(said).not.toHaveProperty("err");
});
