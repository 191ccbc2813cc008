/**
 * A bot whose key the server refuses while it runs (its account deactivated) is stopped, as its
 * log line says: its cron jobs stop with its event queue, rather than run on with a refused key.
 * A real daemon in this process against the sandbox, on a held test clock.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";

const EMAIL = "ticker-bot@sandbox.example";
let runs = 0;
const ticker = defineBot({
  setup(bot) {
    bot.cron("* * * * *", { id: "tick" }, () => {
      runs++;
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

it("a bot whose key is refused while it runs runs its cron jobs no more", async () => {
  runs = 0;
  up = await startGatedDaemon({
    name: "ticker",
    email: EMAIL,
    fullName: "Ticker",
    definition: ticker,
    clock: new TestClock({ held: true }),
    heartbeatSeconds: 1,
  });
  const { running, clock, sandbox } = up;
  const bot = running.daemon.bots[0]!;
  await expect.poll(() => bot.status.state).toBe("polling");
  const toNextMinute = () => clock.advance(60_000 - (clock.now() % 60_000));
  await toNextMinute();
  await expect.poll(() => runs).toBe(1);

  // Deactivated: the poll the server holds ends at its heartbeat, and the next one is refused.
  sandbox.control.setActive(EMAIL, false);
  await expect.poll(() => bot.status.state, { timeout: 15_000 }).toBe("auth_failed");
  await toNextMinute();
  await toNextMinute();
  expect(runs).toBe(1);
  expect(running.logged("authentication failed; this bot is stopped")).toHaveLength(1);
});
