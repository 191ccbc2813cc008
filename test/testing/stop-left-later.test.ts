/**
 * Runs a stop leaves (still running a grace after its deadline aborted them, see
 * stop-left-run.test.ts) that are a failure stage's later attempt, or a dialog's turn: each settles
 * only once the stop closed the store, held by a promise the test opens. Nothing of them is
 * recorded then (no error about a closed store), and across the next start each message is handled
 * once, each reply sent once, each answer taken under the question it answered.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { deferred } from "../support/deferred.ts";
import { aborted, errorLines, handledOnceAtStart, leftEnded } from "../support/left-runs.ts";

const MEMBER = "member@sandbox.example";
// On a held clock the stop's deadline passes at once: a handler still running is aborted then.
const held = createBotTest({ clock: { held: true } });
/** Error lines, but for the test's own throw (`first run fails`). */
const errors = (logs: readonly Record<string, unknown>[]) => errorLines(logs, "first run fails");

/** Retries after a pause of 20 s, which a test passes on its held clock ({@link nextAttempt}). */
const RETRIES = "retries: { attempts: 3, backoff: 20s }";

/** The pause after a failed run passes: its next attempt, run `n` of the bot's handler, begins. */
async function nextAttempt(
  clock: { pendingDelays(): number[]; advance(ms: number): Promise<void> },
  runs: () => number,
  n: number,
) {
  await expect.poll(() => clock.pendingDelays()).toContain(20_000);
  await clock.advance(20_000);
  await expect.poll(runs).toBe(n);
}

/** Stop `bot`, then open `late`: the run the stop left ends once the store closed, said at warn, no error. */
async function stopThenOpen(
  bot: { stop(): Promise<void>; logs(): readonly Record<string, unknown>[] },
  late: { resolve(): void },
): Promise<void> {
  await bot.stop();
  late.resolve();
  await expect.poll(() => leftEnded(bot.logs())).toBe(true);
  expect(errors(bot.logs())).toEqual([]);
}

for (const mode of ["queue", "outgoing webhook"] as const)
  for (const ends of ["returns", "throws", "replies"] as const)
    held(
      `${mode}: a later attempt the stop left, that ${ends} once the store closed, is handled once at the next start`,
      async ({ runBot, clock }) => {
        const late = deferred();
        let runs = 0;
        const definition = defineBot({
          setup(b) {
            b.on("message", async (ctx) => {
              runs++;
              if (runs === 1) throw new Error("first run fails");
              if (runs === 2) {
                await aborted(ctx.signal);
                await late.promise;
                if (ends === "throws") throw new Error("late failure");
                if (ends === "returns") return;
              }
              await ctx.reply(`done: ${ctx.text}`);
            });
          },
        });
        const bot = await runBot({
          bot: definition,
          name: "later",
          config: RETRIES,
          outgoingWebhook: mode !== "queue",
        });
        const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "one" });
        await nextAttempt(clock, () => runs, 2);
        await stopThenOpen(bot, late);

        await handledOnceAtStart(bot, id);
        expect(runs).toBe(3);
        expect(errors(bot.logs())).toEqual([]);
      },
    );

/** A bot whose `order` asks a size; run `hold` of it waits for the stop's abort, then for `late`. */
function orderBot(late: Promise<void>, hold: "before asking" | "after the answer") {
  let runs = 0;
  const bot = defineBot({
    setup(b) {
      b.command("order", async (ctx) => {
        runs++;
        const held = async () => {
          await aborted(ctx.signal);
          await late;
        };
        if (runs === 1 && hold === "before asking") await held();
        const size = await ctx.prompt("Which size?", { timeout: "10m" });
        if (runs === 2 && hold === "after the answer") await held();
        await ctx.reply(`one ${size.text}`);
      });
    },
  });
  return { bot, runs: () => runs };
}

held(
  "a dialog's first run the stop left before it asked asks once, at the next start",
  async ({ runBot }) => {
    const late = deferred();
    const { bot: definition, runs } = orderBot(late.promise, "before asking");
    const bot = await runBot({ bot: definition, name: "order" });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "order" });
    await expect.poll(runs).toBe(1);
    await stopThenOpen(bot, late);

    await bot.start();
    await bot.handled(id);
    const answer = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "large" });
    await bot.handled(answer);
    expect(bot.replies().map((m) => m.content)).toEqual(["Which size?", "one large"]);
    expect(errors(bot.logs())).toEqual([]);
  },
);

for (const mode of ["queue", "outgoing webhook"] as const)
  held(
    `${mode}: a dialog's run on an answer the stop left goes on once, at the next start`,
    async ({ runBot }) => {
      const late = deferred();
      const { bot: definition, runs } = orderBot(late.promise, "after the answer");
      const bot = await runBot({ bot: definition, name: "order", outgoingWebhook: mode !== "queue" });
      const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "order" });
      await bot.handled(id);
      const answer = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "large" });
      await expect.poll(runs).toBe(2);
      await stopThenOpen(bot, late);

      await bot.start();
      await bot.handled(answer);
      await bot.nextReply({ after: answer, where: (m) => m.content.startsWith("one") });
      expect(bot.replies().map((m) => m.content)).toEqual(["Which size?", "one large"]);
      expect(bot.dialogs()).toEqual([]);
      expect(errors(bot.logs())).toEqual([]);
    },
  );

held(
  "a dialog's run the stop left that asks its next question once the store closed asks it once",
  async ({ runBot }) => {
    const late = deferred();
    let runs = 0;
    const definition = defineBot({
      setup(b) {
        b.command("order", async (ctx) => {
          runs++;
          const size = await ctx.prompt("Which size?", { timeout: "10m" });
          if (runs === 2) {
            await aborted(ctx.signal);
            await late.promise;
          }
          const colour = await ctx.prompt("Which colour?", { timeout: "10m" });
          await ctx.reply(`one ${size.text} ${colour.text}`);
        });
      },
    });
    const bot = await runBot({ bot: definition, name: "order" });
    const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
    await bot.handled(bot.post(MEMBER, dm("order")));
    const size = bot.post(MEMBER, dm("large"));
    await expect.poll(() => runs).toBe(2);
    await stopThenOpen(bot, late);

    await bot.start();
    await bot.handled(size);
    await bot.nextReply({ after: size, where: (m) => m.content === "Which colour?" });
    const colour = bot.post(MEMBER, dm("red"));
    await bot.handled(colour);
    const said = bot.replies().map((m) => m.content);
    expect(said).toEqual(["Which size?", "Which colour?", "one large red"]);
    expect(errors(bot.logs())).toEqual([]);
  },
);

held(
  "a dialog's later attempt the stop left goes on once from its log at the next start",
  async ({ runBot, clock }) => {
    const late = deferred();
    let runs = 0;
    const definition = defineBot({
      setup(b) {
        b.command("order", async (ctx) => {
          runs++;
          const size = await ctx.prompt("Which size?", { timeout: "10m" });
          if (runs === 2) throw new Error("first run fails");
          if (runs === 3) {
            await aborted(ctx.signal);
            await late.promise;
          }
          await ctx.reply(`one ${size.text}`);
        });
      },
    });
    const bot = await runBot({ bot: definition, name: "order", config: RETRIES });
    const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
    await bot.handled(bot.post(MEMBER, dm("order")));
    const answer = bot.post(MEMBER, dm("large"));
    await nextAttempt(clock, () => runs, 3);
    await stopThenOpen(bot, late);

    await bot.start();
    await bot.handled(answer);
    await bot.nextReply({ after: answer, where: (m) => m.content.startsWith("one") });
    expect(bot.replies().map((m) => m.content)).toEqual(["Which size?", "one large"]);
    expect(bot.dialogs()).toEqual([]);
    expect(runs).toBe(4);
    expect(errors(bot.logs())).toEqual([]);
  },
);
