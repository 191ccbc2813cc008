import { expect, test } from "vitest";
import { cronProblem } from "../../src/scheduler/check-declarations.ts";

test("bot.cron() options: an unknown missed-run policy and an empty id are refused, naming the call", () => {
  expect(cronProblem("* * * * *", { missed: "all" })).toBe(
    'bot.cron("* * * * *").missed "all": use "skip" or "run-once".',
  );
  expect(cronProblem("* * * * *", { id: " " })).toBe('bot.cron("* * * * *").id must be a non-empty string.');
  expect(cronProblem("* * * * *", { id: "hourly", missed: "run-once" })).toBeUndefined();
});
