/**
 * runBot's `daemon`: keys of the daemon's config (its top level) that a bot's test may set, checked
 * as `bothost run` checks them and refused in the test's terms (`daemon:LINE:COLUMN`); those the
 * kit decides itself are said to be runBot's.
 */
import { defineBot } from "bothost";
import { describe, expect, test } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";

describe("runBot's daemon option", () => {
  test("sets the daemon's shutdown_timeout: a stop cuts a handler still running at it", async ({
    runBot,
  }) => {
    let started = false;
    let aborted = false;
    const slow = defineBot({
      setup(bot) {
        bot.on("message", async (ctx) => {
          started = true;
          // Deaf to everything but the stop's deadline.
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
          aborted = true;
        });
      },
    });
    // The handler timeout far past the stop's deadline: only shutdown_timeout ends the run.
    const bot = await runBot({
      bot: slow,
      name: "slow",
      config: "handler_timeout: 1h",
      daemon: "shutdown_timeout: 50ms",
    });
    bot.post(MEMBER, { type: "direct", to: [bot.email], content: "take your time" });
    await expect.poll(() => started).toBe(true);
    // With the default (10 s) this stop outlasts the test's timeout.
    await bot.stop();
    expect(aborted).toBe(true);
    expect(bot.logs().some((l) => String(l.msg).startsWith("shutdown deadline passed"))).toBe(true);
  });

  test("refuses what bothost run would refuse, located in the daemon's lines", async ({ runBot }) => {
    const bot = defineBot({ setup() {} });
    const refusal = async (daemon: unknown) => {
      const err = await runBot({ bot, name: "keys", daemon: daemon as string }).catch((e: Error) => e);
      if (!(err instanceof Error)) throw new Error("runBot started the bot");
      expect(err.message).not.toMatch(/bothost-daemon-|\.yaml/);
      return { code: (err as { code?: string }).code, message: err.message };
    };
    const refused = (...lines: string[]) => ({
      code: "CONFIG_INVALID",
      message: `the daemon's config would be refused by bothost run:\n${lines.map((l) => `  ${l}`).join("\n")}`,
    });
    expect(await refusal("shutdown_timeout: soon")).toEqual(
      refused(
        'daemon:1:19 shutdown_timeout: is not a duration: write a number with a unit, like "30s", "5m", "24h" or "1h30m" (units ms, s, m, h, d), or a number of milliseconds',
      ),
    );
    expect(await refusal("longpoll_margin: 1s\nshutdown_timout: 1s")).toEqual(
      refused('daemon:2:1 shutdown_timout: is not a known key: did you mean "shutdown_timeout"?'),
    );
    expect(await refusal("shutdown_timeout: 1s\nshutdown_timeout: 2s")).toEqual(
      refused("daemon:2:1 shutdown_timeout: is set twice (also on line 1 of its daemon): keep one of them"),
    );
    // A bot's key belongs in config.
    expect(await refusal("handler_timeout: 5s")).toEqual(
      refused(
        "daemon:1:1 handler_timeout: is not a setting of the whole daemon: it is the bot's, given in runBot's config",
      ),
    );
    // The kit's own keys, whether it writes them too (server, bots) or not (log).
    expect(await refusal("server:\n  url: http://127.0.0.1:9")).toEqual(
      refused("daemon:1:1 server: is set by runBot itself: the bot runs against the sandbox"),
    );
    expect(await refusal("bots: {}")).toEqual(
      refused(
        "daemon:1:1 bots: is set by runBot itself: give the bot as runBot's bot option, more of its entry as config",
      ),
    );
    expect(await refusal("log: { level: warn }")).toEqual(
      refused("daemon:1:1 log: is set by runBot itself: the kit keeps every line, at debug, for logs()"),
    );
    expect((await refusal("shutdown_timeout: [")).message).toMatch(
      /^the daemon's config would be refused by bothost run:\n {2}daemon:1:\d+ YAML syntax error: /,
    );
    expect(await refusal(5)).toEqual({
      code: "INVALID_ARGUMENT",
      message: "runBot: daemon must be a string, got 5",
    });
  });
});
