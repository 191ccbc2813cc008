/**
 * A handler that calls a helper wrongly (a bad argument, refused before any request) is told the
 * error, the parameter and the place in its own code: the "handler failed" line and the dead letter
 * carry no stack of bothost's frames.
 */
import { type BotDefinition, defineBot } from "../../src/bot/define-bot.ts";
import type { BotContext } from "../../src/pipeline/context.ts";
import type { TestBot } from "../../src/testing/run-bot.ts";
import { expect, test } from "../../src/testing/vitest.ts";

const placed = (name: string) =>
  new RegExp(`^${name}\\n {4}at test/pipeline/refusal-place\\.test\\.ts:\\d+:\\d+$`);

/** A bot whose handler is `handler`, and the log lines of its failure on a message. */
async function failing(
  start: (o: { bot: BotDefinition; name: string }) => Promise<TestBot>,
  handler: (ctx: BotContext<unknown>) => Promise<unknown>,
  thrown: RegExp,
) {
  const bot = await start({
    bot: defineBot({
      setup: (b) => {
        b.on("message", async (ctx) => {
          await handler(ctx);
        });
      },
    }),
    name: "wrong",
  });
  const id = await bot.post("member@sandbox.example", {
    type: "channel",
    to: "general",
    topic: "t",
    content: "x",
  });
  await expect(bot.handled(id)).rejects.toThrow(thrown);
  const failed = bot.logs().find((l) => l.msg === "handler failed") as { err: Record<string, unknown> };
  const letter = bot.logs().find((l) => String(l.msg).includes("kept as dead letter"));
  return { err: failed.err, letter };
}

test("a report of a type the server does not offer is said with the bot's line, not bothost's stack", async ({
  runBot,
}) => {
  const { err, letter } = await failing(runBot, (ctx) => ctx.report(1, "bogus"), /Report type "bogus"/);
  expect(err).toMatchObject({ type: "ReportError", code: "REPORT_INVALID", field: "type" });
  expect(err.stack).toMatch(placed("ReportError"));
  expect(letter).toMatchObject({ refused: { code: "REPORT_INVALID", parameter: "type" } });
});

test("a report of no message id names the parameter", async ({ runBot }) => {
  const { err, letter } = await failing(
    runBot,
    (ctx) => ctx.report(Number("abc"), "spam"),
    /messageId must be a positive integer/,
  );
  expect(err.stack).toMatch(placed("BothostError"));
  expect(letter).toMatchObject({ refused: { code: "INVALID_ARGUMENT", parameter: "messageId" } });
});
