/**
 * A progress its handler finished (`done()`) before a crash, the handler run again after the
 * restart: the progress is taken as it ended. No edit brings back a text it showed before its
 * final one, and the asker's message is not given the `working` reaction again. Before, the run
 * again edited the message back to its first update, then to the final text, and reacted with
 * `working` once more before swapping it. The testing kit against the sandbox over HTTP.
 */
import { defineBot } from "../../../src/bot/define-bot.ts";
import { expect, test } from "../../../src/testing/vitest.ts";

const MEMBER = "member@sandbox.example";

let runs = 0;
let finished = false;
let shown: () => void = () => {};
const stepShown = new Promise<void>((resolve) => {
  shown = resolve;
});
const builder = defineBot({
  setup(bot) {
    bot.command("build", async (ctx) => {
      runs++;
      const progress = await ctx.progress("Building…", { ack: { working: "eyes", done: "check" } });
      progress.update("Building: step 1");
      if (runs === 1) await stepShown;
      await progress.done("Built.");
      if (runs === 1) finished = true;
      // The first run stops here until the crash cuts it off.
      if (runs === 1) await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      await ctx.reply("after the build");
    });
  },
});

test("a progress finished before a crash is not edited or acknowledged again by the run again", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const bot = await runBot({ bot: builder, name: "builder" });
  const asked = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "build" });
  const progress = await bot.nextReply({ after: asked });
  const content = () => sandbox.control.messages().find((m) => m.id === progress.id)?.content;
  for (let i = 0; i < 10 && content() !== "Building: step 1"; i++) await clock.advance(1_000);
  shown();
  // The clock moved a second at a time until the first run's done() is over.
  for (let i = 0; i < 10 && !finished; i++) await clock.advance(1_000);
  expect(finished).toBe(true);
  expect(content()).toBe("Built.");
  const before = sandbox.control.requests.length;
  await bot.restart({ crash: true });
  await bot.nextReply({ after: progress.id, where: (m) => m.content === "after the build" });
  const since = sandbox.control.requests.slice(before);
  const touched = since.filter((r) => r.path === `/messages/${progress.id}` || /\/reactions$/.test(r.path));
  expect(touched.map((r) => `${r.method} ${r.path}`)).toEqual([]);
  expect(sandbox.control.messages().find((m) => m.id === progress.id)?.content).toBe("Built.");
  expect(runs).toBe(2);
});
