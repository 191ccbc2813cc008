/**
 * A handler that settles only after its bot's stop closed the state store (deaf to its signal for
 * a while, e.g. an aborted request slow to fail): the stop left its run, so nothing of it is
 * recorded then (no error about a closed store), and its message is handled once at the next
 * start: caught up on a queue, replayed from the dead letter the stop kept for an outgoing
 * webhook's delivery (the server gives up on a bot that is down).
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { deferred } from "../support/deferred.ts";
import { LEFT_ENDED } from "../support/left-runs.ts";

const MEMBER = "member@sandbox.example";
// On a held clock the stop's deadline passes at once: a handler still running is aborted then.
const held = createBotTest({ clock: { held: true } });

/** A bot whose first run, once aborted, waits for `late` and then `ends` as said; later runs reply. */
function lateBot(late: Promise<void>, ends: "returns" | "throws") {
  let runs = 0;
  const bot = defineBot({
    setup(b) {
      b.on("message", async (ctx) => {
        runs++;
        if (runs === 1) {
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
          await late;
          if (ends === "throws") throw ctx.signal.reason;
          return;
        }
        await ctx.reply(`done: ${ctx.text}`);
      });
    },
  });
  return { bot, runs: () => runs };
}

for (const mode of ["queue", "outgoing webhook"] as const)
  for (const ends of ["returns", "throws"] as const)
    held(
      `${mode}: a run that ${ends} once the stop closed the store is handled once at the next start`,
      async ({ runBot }) => {
        const late = deferred();
        const { bot: definition, runs } = lateBot(late.promise, ends);
        const bot = await runBot({ bot: definition, name: "late", outgoingWebhook: mode !== "queue" });
        const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "one" });
        await expect.poll(runs).toBe(1);
        await bot.stop();
        late.resolve();
        await expect.poll(() => bot.logs().some((l) => String(l.msg).startsWith(LEFT_ENDED))).toBe(true);
        // An expected situation: warned, and no error about the closed store.
        expect(bot.logs().filter((l) => Number(l.level) >= 50)).toEqual([]);

        await bot.start();
        await bot.handled(id);
        const done = await bot.nextReply({ after: id, where: (m) => m.content.startsWith("done") });
        expect(done.content).toBe("done: one");
        // The server's own line for the delivery it gave up on while the bot was down, then the run.
        const failed = mode === "queue" ? [] : ["Failure! Bot is unavailable"];
        expect(bot.replies().map((m) => m.content)).toEqual([...failed, "done: one"]);
        expect(runs()).toBe(2);
      },
    );
