/**
 * A press on a question's button (a reaction with one of its emoji choices) carries no message of
 * the person's: `bot.handled(question)` and `bot.progress(question)`, given the question the press
 * answered, wait until the press is taken and the run it began is over (the progress it showed
 * finished). Before, both resolved at once (the bot's own message counts as handled as soon as it
 * is read), and `progress` showed nothing of the work the press began.
 */
import { defineBot } from "bothost";
import { createBotTest, describe, expect } from "bothost/testing/vitest";
import { deferred } from "../support/deferred.ts";

const MEMBER = "member@sandbox.example";
const test = createBotTest({});

function worker() {
  const reached = deferred();
  const release = deferred();
  const bot = defineBot({
    setup(bot) {
      bot.track("reactions");
      bot.command("work", async (ctx) => {
        const go = await ctx.prompt("Start the work?", { choices: { yes: "check", no: "cross_mark" } });
        if (go.value === "no") return;
        const progress = await ctx.progress("Working…");
        reached.resolve();
        await release.promise;
        await progress.done("Worked.");
      });
    },
  });
  return { bot, reached, release };
}

describe("a press on a question's button", () => {
  test("progress(question) waits for the run the press began", async ({ runBot }) => {
    const { bot: definition, reached, release } = worker();
    const bot = await runBot({ bot: definition, name: "worker" });
    const question = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "work" });
    await bot.react(question, "check", { as: MEMBER });
    const viewing = bot.progress(question.id, { timeoutMs: 4_000 });
    await reached.promise;
    release.resolve();
    const view = await viewing;
    expect(view.text).toBe("Worked.");
    expect(bot.dialogs()).toEqual([]);
  });

  test("handled(question) waits for the run the press began", async ({ runBot }) => {
    const { bot: definition, reached, release } = worker();
    const bot = await runBot({ bot: definition, name: "worker" });
    const question = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "work" });
    await bot.react(question, "check", { as: MEMBER });
    const handled = bot.handled(question.id, { timeoutMs: 4_000 });
    let over = false;
    void handled.then(() => {
      over = true;
    });
    await reached.promise;
    expect(over).toBe(false);
    release.resolve();
    await handled;
    expect(bot.replies().at(-1)?.content).toBe("Worked.");
  });
});
