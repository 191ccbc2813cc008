/**
 * `ctx.schedule.at` after a lost answer (the server booked it, then answered 502): the retry
 * finds the booking among the server's scheduled messages whatever topic the handler gave, as the
 * server stores and lists it: "(no topic)" and the realm's empty-topic display name are listed as
 * "" (GET /scheduled_messages has no `allow_empty_topic_name`: it lists the stored topic),
 * surrounding whitespace is stripped, inner whitespace kept. One booking each, never two.
 */
import { describe, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "booker@sandbox.example";
const RETRIES = "retries: { attempts: 4, backoff: 50ms, max_backoff: 100ms }";

const world = useSandbox({ bots: { [BOT]: "Booker" } });

describe("a booking whose create answer was lost", () => {
  it.each([
    ["the empty topic", "", ""],
    ['"(no topic)"', "(no topic)", ""],
    ["the empty-topic display name", "general chat", ""],
    ["the display name padded", "  general chat ", ""],
    ["a padded topic", "  standup  ", "standup"],
    ["inner whitespace", "daily  standup", "daily  standup"],
  ])("with %s is found on the retry and booked once", async (_name, topic, listed) => {
    let runs = 0;
    const booker = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          runs++;
          await ctx.schedule.at({
            to: "general",
            topic,
            content: `later: ${ctx.event.message.content}`,
            at: Date.now() + 3_600_000,
          });
          await ctx.reply("booked");
        });
      },
    });
    const running = await world.daemon({ booker: { email: BOT, definition: booker, extra: RETRIES } });
    world.sandbox.control.failNext(1, {
      status: 502,
      after: true,
      paths: [/^\/scheduled_messages$/],
      methods: ["POST"],
    });
    world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "x" });
    await expect
      .poll(() => world.messagesFrom(BOT).map((m) => m.content), { timeout: 10_000 })
      .toEqual(["booked"]);
    expect(runs).toBe(2);
    expect(world.sandbox.control.scheduled().map((s) => [s.topic, s.content])).toEqual([
      [listed, "later: x"],
    ]);
    expect(running.logged("handler failed; running it again after a pause")).toHaveLength(1);
  });
});
