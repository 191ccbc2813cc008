/**
 * A cron job's run still going once the stop's deadline passed (deaf to its signal, or slow to
 * settle): the stop gives it the grace a message's run gets, then leaves it. Once it ends after
 * the store closed, nothing of it is recorded (no error about a closed store), and its occurrence,
 * still marked under way, runs again at the next start, once.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { deferred } from "../support/deferred.ts";
import { aborted, errorLines, leftEnded } from "../support/left-runs.ts";

// On a held clock the stop's deadline passes at once: a job still running is aborted then.
const held = createBotTest({ clock: { held: true } });
const errors = (logs: readonly Record<string, unknown>[]) => errorLines(logs, "first attempt fails");
const RETRIES = "retries: { attempts: 3, backoff: 20s }";

for (const late of ["first attempt", "later attempt"] as const)
  for (const ends of ["returns", "throws"] as const)
    held(
      `a cron job's ${late} the stop left, that ${ends} once the store closed, runs again once at the next start`,
      async ({ runBot, clock }) => {
        const release = deferred();
        let runs = 0;
        const holds = late === "first attempt" ? 1 : 2;
        const definition = defineBot({
          setup(b) {
            b.cron("0 9 * * *", { id: "daily" }, async (ctx) => {
              runs++;
              if (runs < holds) throw new Error("first attempt fails");
              if (runs === holds) {
                await aborted(ctx.signal);
                await release.promise;
                if (ends === "throws") throw new Error("late failure");
                await ctx.state.set("ran", true);
                return;
              }
              await ctx.send({ type: "channel", to: "general", topic: "daily", content: "done" });
            });
          },
        });
        const bot = await runBot({ bot: definition, name: "daily", config: RETRIES });
        void clock.advanceTo(nextNine(clock.now()));
        if (late === "later attempt") {
          await expect.poll(() => clock.pendingDelays()).toContain(20_000);
          void clock.advance(20_000);
        }
        await expect.poll(() => runs).toBe(holds);
        await bot.stop();
        release.resolve();
        await expect.poll(() => leftEnded(bot.logs())).toBe(true);
        expect(errors(bot.logs())).toEqual([]);

        await bot.start();
        await expect.poll(() => runs).toBe(holds + 1);
        await expect.poll(() => bot.replies().map((m) => m.content)).toEqual(["done"]);
        expect(errors(bot.logs())).toEqual([]);
      },
    );

/** The next 09:00 UTC after `now`. */
function nextNine(now: number): Date {
  const at = new Date(now);
  at.setUTCHours(9, 0, 0, 0);
  if (at.getTime() <= now) at.setUTCDate(at.getUTCDate() + 1);
  return at;
}
