/**
 * `ctx.schedule.at` after a lost answer (the server booked it, then answered 502): the retry
 * finds the booking among the server's scheduled messages whatever topic the handler gave, as the
 * server stores and lists it: "(no topic)" and the realm's empty-topic display name are listed as
 * "" (GET /scheduled_messages has no `allow_empty_topic_name`: it lists the stored topic),
 * surrounding whitespace is stripped, inner whitespace kept; and whatever its content's trailing
 * whitespace, matched as the server strips it. One booking each, never two.
 */
import { describe, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "booker@sandbox.example";
const RETRIES = "retries: { attempts: 4, backoff: 50ms, max_backoff: 100ms }";

const world = useSandbox({ bots: { [BOT]: "Booker" } });

/**
 * A daemon whose handler books `content` in `topic`, the server's answer to the booking lost:
 * the run again reads the bookings back. Returns the server's bookings, once the handler replied.
 */
async function bookedWithLostAnswer(topic: string, content: string) {
  let runs = 0;
  const booker = defineBot({
    setup(bot) {
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        runs++;
        await ctx.schedule.at({ to: "general", topic, content, at: Date.now() + 3_600_000 });
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
  expect(running.logged("handler failed; running it again after a pause")).toHaveLength(1);
  return world.sandbox.control.scheduled().map((s) => [s.topic, s.content]);
}

describe("a booking whose create answer was lost", () => {
  it.each([
    ["the empty topic", "", ""],
    ['"(no topic)"', "(no topic)", ""],
    ["the empty-topic display name", "general chat", ""],
    ["the display name padded", "  general chat ", ""],
    ["a padded topic", "  standup  ", "standup"],
    ["inner whitespace", "daily  standup", "daily  standup"],
  ])("with %s is found on the retry and booked once", async (_name, topic, listed) => {
    expect(await bookedWithLostAnswer(topic, "later: x")).toEqual([[listed, "later: x"]]);
  });

  // The server strips trailing whitespace as Python's str.rstrip() does: U+0085 is whitespace to
  // it, U+FEFF is not. The retry matches the content as stored.
  it.each([
    ["a trailing U+0085 (stripped)", "later: x\u0085", "later: x"],
    ["a trailing U+FEFF (kept)", "later: x\uFEFF", "later: x\uFEFF"],
  ])("with content ending in %s is found on the retry and booked once", async (_name, content, stored) => {
    expect(await bookedWithLostAnswer("t", content)).toEqual([["t", stored]]);
  });
});
