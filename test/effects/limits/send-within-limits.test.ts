import { describe, expect, it } from "vitest";
import type { BotApi } from "../../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../../src/bot/define-bot.ts";
import { type BotDaemon, requestsSince, startBots } from "../../support/bot-daemon.ts";
import { useSandbox } from "../../support/sandbox-fixture.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";

/** Three paragraphs of 6000 characters: 18 004 in all, over the 10 000 limit. */
const paragraphs = ["a", "b", "c"].map((c) => c.repeat(6000));
const long = paragraphs.join("\n\n");

const replier = {
  setup(bot: BotApi) {
    bot.on("message", { direct: true }, (ctx) => ctx.reply(long));
  },
} as BotDefinition;

let running: BotDaemon | undefined;

const world = useSandbox({ heartbeatSeconds: 1 });

const sentByBot = () => world.messagesFrom(BOT);

describe("ctx.send and ctx.reply within the server's limits", () => {
  it("splits long content at paragraph breaks and sends the parts in order", async () => {
    running = world.stopAfter(await startBots(world.sandbox, { long: { email: BOT, definition: replier } }));
    const ctx = running.context();
    const { id } = await ctx.send({ type: "channel", to: "general", topic: "report", content: long });
    const sent = sentByBot();
    expect(sent.map((m) => m.content)).toEqual(paragraphs);
    expect(sent.map((m) => m.topic)).toEqual(["report", "report", "report"]);
    expect(id).toBe(sent[0]!.id);
    expect(sent.map((m) => m.id as number)).toEqual(
      [...sent.map((m) => m.id as number)].sort((a, b) => a - b),
    );
  });

  it("ctx.reply splits too", async () => {
    running = world.stopAfter(await startBots(world.sandbox, { long: { email: BOT, definition: replier } }));
    world.sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "the report, please" });
    await expect.poll(() => sentByBot().length).toBe(3);
    expect(sentByBot().map((m) => m.content)).toEqual(paragraphs);
  });

  it("content at the limit is one message", async () => {
    running = world.stopAfter(await startBots(world.sandbox, { long: { email: BOT, definition: replier } }));
    await running
      .context()
      .send({ type: "channel", to: "general", topic: "t", content: "🙂".repeat(10_000) });
    expect(sentByBot().map((m) => [...String(m.content)].length)).toEqual([10_000]);
  });

  it("long_messages: reject refuses long content and sends nothing", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, {
        long: { email: BOT, definition: replier, extra: "long_messages: reject" },
      }),
    );
    const mark = world.sandbox.control.requests.length;
    await expect(
      running.context().send({ type: "channel", to: "general", topic: "report", content: long }),
    ).rejects.toMatchObject({
      code: "CONTENT_TOO_LONG",
      message:
        "Message content is 18004 characters (Unicode code points), over the server's max_message_length of 10000. " +
        "Shorten it, or set long_messages: split in the bot's config (next to settings:) to send it as several messages.",
    });
    expect(requestsSince(world.sandbox, mark)).toEqual([]);
  });

  it("refuses a topic over max_topic_length instead of letting the server cut it", async () => {
    running = world.stopAfter(await startBots(world.sandbox, { long: { email: BOT, definition: replier } }));
    const mark = world.sandbox.control.requests.length;
    await expect(
      running.context().send({ type: "channel", to: "general", topic: "t".repeat(61), content: "hi" }),
    ).rejects.toMatchObject({
      code: "TOPIC_TOO_LONG",
      message:
        `Topic "${"t".repeat(29)}…" is 61 characters (Unicode code points), over the server's max_topic_length ` +
        "of 60; the server would cut it short. Use a topic of at most 60 characters.",
    });
    expect(requestsSince(world.sandbox, mark)).toEqual([]);
    await running.context().send({ type: "channel", to: "general", topic: "t".repeat(60), content: "hi" });
    expect(sentByBot().map((m) => m.topic)).toEqual(["t".repeat(60)]);
  });

  it("rejects a bad long_messages value at its config line", async () => {
    await expect(
      startBots(world.sandbox, {
        long: { email: BOT, definition: replier, extra: "long_messages: truncate" },
      }),
    ).rejects.toThrow(
      /^long's config would be refused by bothost run:\n {2}config:1:16 long_messages: must be one of split, reject, not "truncate"$/,
    );
  });
});
