/**
 * A dialog `ctx.startDialog` began runs on a made-up first message (a negative id) that nobody
 * wrote: a `ctx.progress` acknowledgement has nothing to react to and makes no call, and
 * `ctx.react()` without `messageId` is REACT_NO_MESSAGE. Before, both called the server with the
 * made-up id: three warnings of a 404 for the acknowledgements, and ctx.react failed the handler
 * with that 404 (retried, then a dead letter). The testing kit against the sandbox over HTTP.
 */
import { defineBot } from "../../src/bot/define-bot.ts";
import { BothostError } from "../../src/errors/bothost-error.ts";
import { expect, test } from "../../src/testing/vitest.ts";

const MEMBER = "member@sandbox.example";

const worker = defineBot({
  setup(bot) {
    bot.command("kick", async (ctx) => {
      await ctx.startDialog(ctx.sender.id, "work");
    });
    bot.command("work", async (ctx) => {
      const progress = await ctx.progress("Working…", { ack: { working: "eyes", done: "check" } });
      progress.append("step 1 done");
      await progress.done("Finished.");
      const reacted = await ctx.react("tada").then(
        () => "reacted",
        (err: unknown) => (err instanceof BothostError ? err.code : String(err)),
      );
      await ctx.reply(`react: ${reacted}`);
    });
  },
});

test("a started dialog's progress acknowledges nothing, and ctx.react says it has no message", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: worker, name: "worker", config: "retries: { attempts: 1 }" });
  const kick = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "kick" });
  const said = await bot.nextReply({ after: kick, where: (m) => m.content.startsWith("react:") });
  expect(said.content).toBe("react: REACT_NO_MESSAGE");
  expect(bot.replies().map((m) => m.content)).toEqual(["Finished.", "react: REACT_NO_MESSAGE"]);
  expect(sandbox.control.requests.filter((r) => /^\/messages\/-?\d+\/reactions$/.test(r.path))).toEqual([]);
  expect(bot.logs().filter((l) => Number(l.level) >= 40)).toEqual([]);
});
