/**
 * A handler cut by `handler_timeout` that then makes a call (its reply) fails on the signal's
 * reason, `ROUTER_HANDLER_TIMEOUT`. Its `handler failed` line and its dead letter carry that error
 * with no stack: its frames are only bothost's own (the timer that cut the run), nothing of the
 * bot's code. Before, both carried them (`handlerTimedOut`, `TaskTimeouts`…). A real daemon and
 * sandbox on a held clock.
 */
import { expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "slow-bot@sandbox.example";
const world = useSandbox({ bots: { [BOT]: "Slow" } });
const MESSAGE = "The handler for channel:1:t ran longer than 6000 ms.";

it("a handler's call made past its timeout fails with the timeout's error, without bothost's frames", async () => {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const definition = defineBot({
    setup(bot: BotApi) {
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        await opened; // slow work that does not look at its signal
        await ctx.reply("late");
      });
    },
  });
  const clock = new ManualClock(Date.now());
  const extra = "handler_timeout: 6s\nretries: { attempts: 1 }";
  const d = await world.daemon({ slow: { email: BOT, definition, extra } }, { clock });
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "x" });
  await expect
    .poll(
      async () => {
        await clock.tick(500);
        return d.logged("handler timed out").length;
      },
      { timeout: 10_000 },
    )
    .toBe(1);
  open();
  await expect.poll(() => d.logged("handler failed").length, { timeout: 10_000 }).toBeGreaterThan(0);
  const [failed] = d.logged("handler failed");
  expect(failed).toMatchObject({
    msg: "handler failed",
    // The line's stack is its type and frames (its message is said once, as `message`): no frame.
    err: { type: "RouterError", code: "ROUTER_HANDLER_TIMEOUT", message: MESSAGE, stack: "RouterError" },
  });
  await expect.poll(() => d.daemon.letters.list(), { timeout: 10_000 }).toHaveLength(1);
  const [letter] = await d.daemon.letters.list();
  expect(letter?.error.stack).toBe(`RouterError: ${MESSAGE}`);
});
