/**
 * ctx.react through a real daemon and the sandbox: one reaction per message however often the
 * handler runs, a lost answer (503, HTML 502, reset after the server acted) tried again without a
 * second reaction, removal of a reaction that is not there, and a clear error without a message.
 */
import { describe, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { FailOptions } from "../../src/sandbox/faults.ts";
import { startBots } from "../support/bot-daemon.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "eyes-bot@sandbox.example";
const RETRIES = "retries: { attempts: 3, backoff: 50ms, max_backoff: 100ms }";

const world = useSandbox({ bots: { [BOT]: "Eyes" } });

const post = (content: string) =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content }).id;
/** The reactions on message `id`, as "emoji_name by user id". */
const reactionsOn = (id: number) => {
  const message = world.sandbox.control.messages().find((m) => m.id === id);
  return ((message?.reactions ?? []) as { emoji_name: string; user_id: number }[]).map(
    (r) => `${r.emoji_name} by ${r.user_id}`,
  );
};
const reactionCalls = () =>
  world.sandbox.control.requests.filter(
    (r) => r.email === BOT && /^\/messages\/\d+\/reactions$/.test(r.path),
  );

describe("ctx.react", () => {
  it("reacts once to the event's message, however often the handler runs", async () => {
    const runs = new Map<string, number>();
    const eyes = defineBot({
      setup(bot) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          const text = ctx.event.message.content;
          runs.set(text, (runs.get(text) ?? 0) + 1);
          await ctx.react("eyes");
          if (runs.get(text) === 1) throw new Error("fails after reacting");
          await ctx.reply(`seen ${text}`);
        });
      },
    });
    const running = await world.daemon({ eyes: { email: BOT, definition: eyes, extra: RETRIES } });
    const id = post("one");
    await expect
      .poll(() => world.messagesFrom(BOT).map((m) => m.content), { timeout: 10_000 })
      .toEqual(["seen one"]);
    expect(runs.get("one")).toBe(2);
    expect(reactionsOn(id)).toEqual([`eyes by ${world.idOf(BOT)}`]);
    // The second run's add was answered "already exists": done, not a failure.
    expect(reactionCalls().map((r) => r.status)).toEqual([200, 400]);
    expect(await running.daemon.letters.list()).toEqual([]);
  });

  it.each([
    ["503", { status: 503, after: true }],
    ["HTML 502", { status: 502, nonJson: true, after: true }],
    ["reset", { status: 0, reset: true, after: true }],
  ] as [string, Omit<FailOptions, "paths">][])(
    "%s after the server acted: tried again, one reaction, the handler goes on",
    async (_name, fault) => {
      let runs = 0;
      const eyes = defineBot({
        setup(bot) {
          bot.on("message", { sender: MEMBER }, async (ctx) => {
            runs++;
            await ctx.react("eyes");
            await ctx.reply("seen");
          });
        },
      });
      await world.daemon({ eyes: { email: BOT, definition: eyes, extra: RETRIES } });
      world.sandbox.control.failNext(1, { ...fault, paths: [/^\/messages\/\d+\/reactions$/] });
      const id = post("two");
      await expect.poll(() => world.messagesFrom(BOT).length, { timeout: 10_000 }).toBe(1);
      expect(runs).toBe(1);
      expect(reactionsOn(id)).toEqual([`eyes by ${world.idOf(BOT)}`]);
      expect(reactionCalls().map((r) => r.status)).toEqual([fault.reset ? -1 : fault.status, 400]);
    },
  );

  it("removes a reaction, and removing one that is not there is done too", async () => {
    const quiet = defineBot({ setup: () => {} });
    const running = world.stopAfter(
      await startBots(world.sandbox, { quiet: { email: BOT, definition: quiet } }),
    );
    const id = post("three");
    const ctx = running.context();
    await ctx.react("thumbs_up", { messageId: id });
    expect(reactionsOn(id)).toEqual([`thumbs_up by ${world.idOf(BOT)}`]);
    await ctx.react("thumbs_up", { messageId: id, remove: true });
    await ctx.react("thumbs_up", { messageId: id, remove: true });
    expect(reactionsOn(id)).toEqual([]);
  });

  it("outside a message handler, without messageId, says what to pass", async () => {
    const quiet = defineBot({ setup: () => {} });
    const running = world.stopAfter(
      await startBots(world.sandbox, { quiet: { email: BOT, definition: quiet } }),
    );
    await expect(running.context().react("eyes")).rejects.toMatchObject({
      code: "REACT_NO_MESSAGE",
      message:
        'ctx.react("eyes"): this context has no message event (or, in a dialog ctx.startDialog began, no message of the person); pass { messageId }.',
    });
    expect(reactionCalls()).toEqual([]);
  });
});
