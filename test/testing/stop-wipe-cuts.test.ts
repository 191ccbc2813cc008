/**
 * `stop({ wipe: true })`, which the vitest fixture makes after each test, cuts off the handlers
 * still running instead of giving them the daemon's `shutdown_timeout` (10 s): their state is
 * deleted with the rest. A test that ended while its bot waited (for the account's rate budget,
 * on a clock nobody moves any more) took 10 s more to tear down.
 */
import { defineBot } from "bothost";
import { runBot, startSandbox, TestClock } from "bothost/testing";
import { expect, test } from "vitest";

const MEMBER = "member@sandbox.example";

const waiter = defineBot({
  setup(bot) {
    // Waits until it is stopped, as a send held by the account's rate budget does.
    bot.on("message", { direct: true }, async (ctx) => {
      await ctx.reply("working");
      await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    });
  },
});

// Without the cut the stop waits the daemon's shutdown_timeout (10 s): the test's own timeout, below
// it, fails that; nothing here measures time.
test("stop({ wipe: true }) does not wait for a handler still running", { timeout: 8_000 }, async () => {
  const clock = new TestClock();
  const sandbox = await startSandbox({ clock });
  try {
    const bot = await runBot(sandbox, { bot: waiter, name: "waiter", clock });
    await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "go" });
    await bot.stop({ wipe: true });
    expect(
      bot.logs().filter((l) => l.msg === "shutdown deadline passed; handlers still running were aborted"),
    ).toHaveLength(1);
  } finally {
    await sandbox.stop();
  }
});

const listener = defineBot({ setup: (bot) => void bot.on("message", () => {}) });

// The event queue's deletion at the stop is a courtesy (the server deletes an idle queue itself):
// with the account's budget spent, it waited for the budget (most of a minute here).
test("a stop does not wait for the rate budget to delete the event queue", { timeout: 8_000 }, async () => {
  const clock = new TestClock();
  const sandbox = await startSandbox({ clock });
  try {
    const bot = await runBot(sandbox, { bot: listener, name: "listener", clock });
    sandbox.control.setUserRateLimit(bot.email, [[60, 1]]);
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
    await bot.handled(id);
    // The poll that brought it was the minute's one call: the events budget is spent.
    await bot.stop({ wipe: true });
    expect(bot.logs().filter((l) => l.msg === "event queue deleted")).toEqual([]);
  } finally {
    await sandbox.stop();
  }
});
