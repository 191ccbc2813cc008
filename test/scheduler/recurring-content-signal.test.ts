/**
 * An announcement's content function gets a signal, as a handler gets `ctx.signal`: aborted past
 * the bot's `handler_timeout` (a call made with it ends then, instead of going on after its
 * booking was given up) and at the bot's stop (which then does not wait for it). At a start, the
 * announcements are reconciled a few at once: content functions that each hang hold the start for
 * one handler_timeout per group of four, not one each.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";

const held = createBotTest({ clock: { held: true } });
const running = createBotTest();

/** Resolves with the signal's reason once it aborts. */
const aborted = (signal: AbortSignal) =>
  new Promise<unknown>((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });

held(
  "the signal aborts at handler_timeout, and the API call made with it ends there",
  async ({ runBot, sandbox, clock }) => {
    let seen: AbortSignal | undefined;
    let callEnded: unknown;
    const definition = defineBot({
      setup(b) {
        b.recurring("rules", {
          cron: "0 9 * * *",
          timezone: "UTC",
          to: "general",
          topic: "rules",
          content: async (_at, { signal }) => {
            seen = signal;
            try {
              const { saved_snippets } = await b.api.savedSnippets.list({ signal });
              return saved_snippets[0]?.content ?? "none";
            } catch (err) {
              callEnded = err;
              throw err;
            }
          },
        });
      },
    });
    // The snippet lookup is held by the server: it never answers while the test waits.
    sandbox.control.delay(3_600_000, { paths: ["/saved_snippets"] });
    try {
      const starting = runBot({ bot: definition, name: "rules", config: "handler_timeout: 5s" });
      await sandbox.control.waitFor(() => sandbox.control.delayed() === 1);
      expect(seen?.aborted).toBe(false);
      await expect.poll(() => clock.pendingDelays()).toContain(5_000);
      await clock.advance(5_000);
      const bot = await starting;
      expect(seen?.aborted).toBe(true);
      expect((seen?.reason as { code?: string } | undefined)?.code).toBe("ROUTER_HANDLER_TIMEOUT");
      // The call was ended by the signal, not left to run on.
      await expect.poll(() => callEnded).toBeDefined();
      expect(callEnded).toBe(seen?.reason);
      expect(
        bot.logs().filter((l) => l.msg === 'announcement "rules" could not be booked; retrying'),
      ).toHaveLength(1);
    } finally {
      sandbox.control.delay(0);
    }
  },
);

running(
  "a stop aborts the signal of a content function under way and does not wait for it",
  async ({ runBot, sandbox }) => {
    let calls = 0;
    let second: ((signal: AbortSignal) => void) | undefined;
    const secondCalled = new Promise<AbortSignal>((resolve) => {
      second = resolve;
    });
    const definition = defineBot({
      setup(b) {
        b.recurring("news", {
          cron: "0 9 * * *",
          timezone: "UTC",
          to: "general",
          topic: "news",
          content: async (_at, { signal }) => {
            if (++calls === 1) return "First news.";
            second?.(signal);
            // Waits on a call that never answers, but for its signal.
            return aborted(signal).then(() => "too late");
          },
        });
      },
    });
    // An hour's handler_timeout: only the stop ends the second call within the test.
    const bot = await runBot({ bot: definition, name: "news", config: "handler_timeout: 1h" });
    // The server sends the booking (its clock alone moved past it): the next one is booked, and its
    // content function waits.
    const due = sandbox.control.scheduled()[0]!.scheduled_delivery_timestamp as number;
    sandbox.control.advanceClock(due * 1000 + 60_000 - sandbox.control.now());
    const signal = await secondCalled;
    expect(signal.aborted).toBe(false);
    await bot.stop();
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe("bot stopping");
    // Given up by the stop, not failed.
    expect(bot.logs().filter((l) => /could not be booked|scheduler step failed/.test(String(l.msg)))).toEqual(
      [],
    );
  },
);

held(
  "announcements are reconciled four at once at a start: six that hang hold it two handler_timeouts",
  async ({ runBot, clock }) => {
    let now = 0;
    let most = 0;
    let called = 0;
    const definition = defineBot({
      setup(b) {
        for (const id of ["a", "b", "c", "d", "e", "f"]) {
          b.recurring(id, {
            cron: "0 9 * * *",
            timezone: "UTC",
            to: "general",
            topic: id,
            content: async (_at, { signal }) => {
              called++;
              most = Math.max(most, ++now);
              await aborted(signal);
              now--;
              throw signal.reason;
            },
          });
        }
      },
    });
    const starting = runBot({ bot: definition, name: "many", config: "handler_timeout: 5s" });
    await expect.poll(() => called).toBe(4);
    await expect.poll(() => clock.pendingDelays().filter((d) => d === 5_000).length).toBe(4);
    await clock.advance(5_000);
    await expect.poll(() => called).toBe(6);
    await expect.poll(() => clock.pendingDelays().filter((d) => d === 5_000).length).toBe(2);
    await clock.advance(5_000);
    const bot = await starting;
    expect(most).toBe(4);
    const failed = bot
      .logs()
      .filter((l) => /^announcement "[a-f]" could not be booked; retrying$/.test(String(l.msg)));
    expect(failed).toHaveLength(6);
  },
);
