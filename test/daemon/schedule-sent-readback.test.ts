/**
 * `ctx.schedule.at` whose answer was lost (the server booked it, then answered 502), the daemon
 * stopped before the run again and down past the booking's time: the server sends the booking
 * meanwhile, and lists it no more. The run again finds the message it became among the bot's
 * own and books nothing: the handler gets `{ sentMessageId }` (no booking id: there is no booking
 * left). One message, no second booking; also when the bot said many messages there since (the
 * read-back pages back past them), and, past the read-back's bound, booked again with a warning. A real
 * daemon in this process against the sandbox over HTTP, both on one clock the test moves.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";

const BOT = "reminder@sandbox.example";
const REMINDER = "Your reminder: stand-up.";

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

const reminder = defineBot({
  setup(bot) {
    bot.on("message", { direct: true }, async (ctx) => {
      // "in general": to the channel's "(no topic)", the empty topic from feature level 334.
      const to = ctx.event.message.content === "in general" ? "general" : [ctx.event.message.sender_id];
      const booking = await ctx.schedule.at({
        to,
        ...(to === "general" ? { topic: "(no topic)" } : {}),
        content: REMINDER,
        at: ctx.now() + 60_000,
      });
      await ctx.reply(JSON.stringify(booking));
    });
  },
});

/**
 * The booking's answer lost, the daemon down two minutes (the server sends the booking meanwhile)
 * while the bot says `since` more messages to the same person; then started again.
 */
async function lostThenSent(since: number, server: { featureLevel?: number; ask?: string } = {}) {
  const clock = new TestClock({ held: true });
  up = await startGatedDaemon({
    name: "reminder",
    email: BOT,
    fullName: "Reminder",
    definition: reminder,
    clock,
    // The retry waits past the restart: the next start runs the message again.
    extra: "retries: { attempts: 3, backoff: 1h, max_backoff: 1h }",
    channels: ["general"],
  });
  const { sandbox } = up;
  // The server's level from the start; the daemon started again registers with it.
  if (server.featureLevel !== undefined) sandbox.control.restartQueues({ featureLevel: server.featureLevel });
  const botId = sandbox.control.users().find((u) => u.email === BOT)!.user_id;
  sandbox.control.failNext(1, {
    status: 502,
    after: true,
    paths: [/^\/scheduled_messages$/],
    methods: ["POST"],
  });
  up.dm(server.ask ?? "remind me");
  await expect
    .poll(() => up!.running.logged("handler failed; running it again after a pause").length, {
      timeout: 10_000,
    })
    .toBe(1);
  expect(sandbox.control.scheduled().filter((s) => !s.delivered)).toHaveLength(1);
  // Down two minutes: the server sends the booking at its whole-minute check.
  await up.restart(
    async () => {
      await clock.advance(2 * 60_000);
      sandbox.control.advanceClock(0);
      const to = [
        sandbox.control.messages().find((m) => m.content === (server.ask ?? "remind me"))!
          .sender_id as number,
      ];
      for (let i = 0; i < since; i++)
        sandbox.control.sendAs(BOT, { type: "direct", to, content: `note ${i}` });
    },
    { deadlineMs: 0 },
  );
  const fromBot = () => sandbox.control.messages().filter((m) => m.sender_id === botId);
  await expect.poll(() => fromBot().length, { timeout: 10_000 }).toBe(2 + since);
  const sent = fromBot()[0]!;
  expect(sent.content).toBe(REMINDER);
  return {
    sent,
    reply: fromBot().at(-1)!,
    bookings: () => sandbox.control.scheduled().filter((s) => !s.delivered),
  };
}

it.each([
  ["a booking sent while the daemon was down is found sent on the run again, not booked twice", 0],
  ["found sent behind more of the bot's messages there than one page holds", 150],
])("%s", { timeout: 15_000 }, async (_, saidSince) => {
  const { sent, reply, bookings } = await lostThenSent(saidSince);
  expect(bookings()).toEqual([]);
  expect(reply.content).toBe(`{"sentMessageId":${sent.id}}`);
});

it("behind more than the read-back's bound: booked again, with a warning naming its time", {
  timeout: 15_000,
}, async () => {
  const { reply, bookings } = await lostThenSent(1100);
  const [again] = bookings();
  expect(reply.content).toBe(`{"scheduledMessageId":${again!.scheduled_message_id}}`);
  const [warned] = up!.running.logged("booking it again");
  expect(warned).toMatchObject({ level: 40, at: expect.any(String) });
  expect(JSON.stringify(warned)).not.toContain(REMINDER);
});

it.each([
  [334, ""],
  [333, "(no topic)"],
])(
  'found sent in a channel\'s "(no topic)" at feature level %i (stored as %j)',
  {
    timeout: 15_000,
  },
  async (featureLevel, stored) => {
    const { sent, reply, bookings } = await lostThenSent(0, { featureLevel, ask: "in general" });
    expect(sent.topic ?? sent.subject).toBe(stored);
    expect(bookings()).toEqual([]);
    expect(reply.content).toBe(`{"sentMessageId":${sent.id}}`);
  },
);
