/**
 * A run whose first attempt `handler_timeout` cut (its conversation moved on) still goes on: its
 * handler deaf to the signal, or its later attempts once it threw. The stop waits for it as for a
 * running handler (its grace), then leaves it: once it ends after the store closed, nothing of it
 * is recorded (no error about a closed store), and the next start handles its message once.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { deferred } from "../support/deferred.ts";
import { aborted, errorLines, handledOnceAtStart, leftEnded } from "../support/left-runs.ts";

const MEMBER = "member@sandbox.example";
const held = createBotTest({ clock: { held: true } });
const errors = (logs: readonly Record<string, unknown>[]) => errorLines(logs, "cut by its timeout");

/** A second's timeout and a 20 s pause before a later attempt, both on the test's held clock. */
const CONFIG = "handler_timeout: 1s\nretries: { attempts: 3, backoff: 20s }";

for (const mode of ["queue", "outgoing webhook"] as const)
  for (const late of ["first attempt", "later attempt"] as const)
    for (const ends of ["returns", "throws"] as const)
      held(
        `${mode}: a run the timeout cut whose ${late} ${ends} once the stop closed the store is handled once at the next start`,
        async ({ runBot, clock }) => {
          const release = deferred();
          let runs = 0;
          const definition = defineBot({
            setup(b) {
              b.on("message", async (ctx) => {
                runs++;
                const holds = late === "first attempt" ? runs === 1 : runs === 2;
                if (runs === 1 && late === "later attempt") {
                  await aborted(ctx.signal);
                  throw new Error("cut by its timeout");
                }
                if (holds) {
                  await release.promise;
                  if (ends === "throws") throw new Error("late failure");
                  if (ends === "returns") return;
                }
                await ctx.reply(`done: ${ctx.text}`);
              });
            },
          });
          const bot = await runBot({
            bot: definition,
            name: "slow",
            config: CONFIG,
            outgoingWebhook: mode !== "queue",
          });
          const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "one" });
          await expect.poll(() => runs).toBe(1);
          await expect.poll(() => clock.pendingDelays()).toContain(1_000);
          await clock.advance(1_000);
          if (late === "later attempt") {
            await expect.poll(() => clock.pendingDelays()).toContain(20_000);
            await clock.advance(20_000);
            await expect.poll(() => runs).toBe(2);
          }
          await bot.stop();
          release.resolve();
          await expect.poll(() => leftEnded(bot.logs())).toBe(true);
          expect(errors(bot.logs())).toEqual([]);

          await handledOnceAtStart(bot, id);
          expect(errors(bot.logs())).toEqual([]);
        },
      );

held(
  "a later attempt of a run the timeout cut that ends at the stop's abort is waited for, not left",
  async ({ runBot, clock }) => {
    let runs = 0;
    const definition = defineBot({
      setup(b) {
        b.on("message", async (ctx) => {
          runs++;
          if (runs <= 2) {
            await aborted(ctx.signal);
            // Settles a few turns after its abort, as an aborted request does.
            await new Promise((resolve) => setTimeout(resolve, 20));
            throw new Error("cut by its timeout");
          }
          await ctx.reply(`done: ${ctx.text}`);
        });
      },
    });
    const bot = await runBot({ bot: definition, name: "slow", config: CONFIG });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "one" });
    await expect.poll(() => clock.pendingDelays()).toContain(1_000);
    await clock.advance(1_000);
    await expect.poll(() => clock.pendingDelays()).toContain(20_000);
    await clock.advance(20_000);
    await expect.poll(() => runs).toBe(2);
    await bot.stop();
    expect(leftEnded(bot.logs())).toBe(false);
    expect(bot.logs().some((l) => String(l.msg).startsWith("handlers still running after"))).toBe(false);
    expect(errors(bot.logs())).toEqual([]);

    await bot.start();
    await bot.handled(id);
    await bot.nextReply({ after: id, where: (m) => m.content.startsWith("done") });
    expect(bot.replies().map((m) => m.content)).toEqual(["done: one"]);
    expect(runs).toBe(3);
    expect(errors(bot.logs())).toEqual([]);
  },
);
