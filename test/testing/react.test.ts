/**
 * `bot.react(message, emoji, { as })`: a person reacts through the sandbox's own route, and the
 * bot's reaction handler receives the event as from that person; the server's refusals reach the
 * test as errors.
 */
import { defineBot } from "bothost";
import { createBotTest, describe, expect, test } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";

/** Tells the person who reacted what it saw, in a direct message. */
const watcher = defineBot({
  setup(bot) {
    bot.on("reaction", async (ctx) => {
      const e = ctx.event;
      await ctx.send({
        type: "direct",
        to: [e.user_id],
        content: `${e.op} ${e.emoji_name} (${e.emoji_code}) on ${e.message_id} by ${e.user?.email}`,
      });
    });
  },
});

describe("react", () => {
  test("a person's reaction, added and taken off, reaches the bot's reaction handler", async ({
    runBot,
    sandbox,
  }) => {
    const bot = await runBot({ bot: watcher, name: "watcher" });
    const id = bot.post(MEMBER, { type: "channel", to: "general", topic: "lunch", content: "pizza?" });
    await bot.react(id, "tada", { as: MEMBER });
    const added = await bot.nextReply({ after: id });
    expect(added.content).toBe(`add tada (1f389) on ${id} by ${MEMBER}`);
    expect(sandbox.control.messageView(id)?.reactions).toMatchObject([{ emoji_name: "tada" }]);

    // A message the kit returned works too: here the bot's own answer.
    await bot.react(added, "eyes", { as: MEMBER });
    const seen = await bot.nextReply({ after: added.id });
    expect(seen.content).toBe(`add eyes (1f440) on ${added.id} by ${MEMBER}`);

    await bot.react(id, "tada", { as: MEMBER, remove: true });
    const removed = await bot.nextReply({ after: seen.id });
    expect(removed.content).toBe(`remove tada (1f389) on ${id} by ${MEMBER}`);
    expect(sandbox.control.messageView(id)?.reactions).toEqual([]);
  });

  test("common emoji reach the bot with the server's codes", async ({ runBot }) => {
    const bot = await runBot({ bot: watcher, name: "watcher" });
    const id = bot.post(MEMBER, { type: "channel", to: "general", topic: "lunch", content: "pizza?" });
    let after = id;
    const pressed: [string, string][] = [
      ["pizza", "1f355"],
      ["taco", "1f32e"],
      ["100", "1f4af"],
      ["smile", "1f642"],
    ];
    for (const [name, code] of pressed) {
      await bot.react(id, name, { as: MEMBER });
      const seen = await bot.nextReply({ after });
      expect(seen.content).toBe(`add ${name} (${code}) on ${id} by ${MEMBER}`);
      after = seen.id;
    }
    // The server's name for 1f642 is `smile`; it has no `slight_smile`.
    await expect(bot.react(id, "slight_smile", { as: MEMBER })).rejects.toThrow(
      "Emoji 'slight_smile' does not exist (BAD_REQUEST)",
    );
  });

  test("the server's refusal is the rejection", async ({ runBot }) => {
    const bot = await runBot({ bot: watcher, name: "watcher" });
    const id = bot.post(MEMBER, { type: "channel", to: "general", topic: "lunch", content: "pizza?" });
    await expect(bot.react(id, "no_such_emoji", { as: MEMBER })).rejects.toThrow(
      `react: adding no_such_emoji on message ${id} as ${MEMBER} was refused: Emoji 'no_such_emoji' does not exist (BAD_REQUEST)`,
    );
    await expect(bot.react(id, "tada", { as: MEMBER, remove: true })).rejects.toThrow(
      "was refused: Reaction doesn't exist. (REACTION_DOES_NOT_EXIST)",
    );
  });
});

/** Tests whose clock stands still between advances: a retry's pause passes only where moved. */
const held = createBotTest({ clock: { held: true } });

describe("ctx.react", () => {
  held(
    "a reaction whose answer was lost is tried again after a pause on the bot's clock",
    async ({ runBot, sandbox, clock }) => {
      const thanked = defineBot({
        setup(bot) {
          bot.on("message", { direct: true }, (ctx) => ctx.react("heart"));
        },
      });
      const bot = await runBot({ bot: thanked, name: "thanked" });
      // The reaction is added; its answer is a 502, so the bot cannot know it was.
      sandbox.control.failNext(1, { status: 502, after: true, paths: [/\/reactions$/] });
      const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "thanks" });
      await expect.poll(() => clock.pendingDelays()).toContain(500);
      await clock.advance(500);
      await bot.handled(id);
      const reactions = sandbox.control.messageView(id)?.reactions as { emoji_name: string }[];
      expect(reactions.map((r) => r.emoji_name)).toEqual(["heart"]);
    },
  );
});
