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

test("stop({ wipe: true }) does not wait for a handler still running", async () => {
  const clock = new TestClock();
  const sandbox = await startSandbox({ clock });
  try {
    const bot = await runBot(sandbox, { bot: waiter, name: "waiter", clock });
    await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "go" });
    const started = Date.now();
    await bot.stop({ wipe: true });
    // The daemon's shutdown_timeout is 10 s: a stop that waited for the handler took that long.
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    await sandbox.stop();
  }
});
