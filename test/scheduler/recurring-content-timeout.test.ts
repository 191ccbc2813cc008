/**
 * An announcement's content function that never gives its text (a call it waits on never answers)
 * is bounded by the bot's `handler_timeout`: its booking fails, said once with no stack of
 * bothost's timer, and is tried again later; the bot starts and handles its messages meanwhile,
 * and its other announcements are booked.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { deferred } from "../support/deferred.ts";

const test = createBotTest();
const MEMBER = "member@sandbox.example";

test("a content function that hangs fails its booking at handler_timeout; the bot starts and answers", async ({
  runBot,
  sandbox,
}) => {
  const never = deferred();
  let asked = 0;
  const definition = defineBot({
    setup(b) {
      b.recurring("weather", {
        cron: "0 9 * * *",
        timezone: "UTC",
        to: "general",
        topic: "weather",
        content: async () => {
          asked++;
          await never.promise;
          return "Sunny.";
        },
      });
      b.recurring("standup", {
        cron: "0 10 * * *",
        timezone: "UTC",
        to: "general",
        topic: "standup",
        content: "Standup!",
      });
      b.on("message", (ctx) => ctx.reply(`echo ${ctx.text}`));
    },
  });
  try {
    const bot = await runBot({ bot: definition, name: "weather", config: "handler_timeout: 300ms" });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
    expect(reply.content).toBe("echo hi");
    expect(asked).toBeGreaterThan(0);
    const failed = bot.logs().filter((l) => l.msg === 'announcement "weather" could not be booked; retrying');
    expect(failed).toHaveLength(1);
    const err = failed[0]!.err as { message: string; stack: string };
    expect(err.message).toBe(
      'announcement "weather": its content function ran longer than 300 ms (the bot\'s handler_timeout); its booking is tried again later',
    );
    expect(err.stack).not.toMatch(/\n\s+at /);
    // The other announcement is booked all the same.
    expect(sandbox.control.scheduled().map((m) => m.topic)).toEqual(["standup"]);
  } finally {
    never.resolve();
  }
});
