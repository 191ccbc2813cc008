/**
 * `stop()` keeps the bot's state and `start()` runs the same bot on it again: `ctx.state` and an
 * open dialog carry over, and messages posted while it was down are caught up; `stop({ wipe: true })`
 * deletes the state, after which the bot cannot start.
 */
import { defineBot } from "bothost";
import { describe, expect, test } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";

const counter = defineBot({
  setup(bot) {
    bot.command("count", async (ctx) => {
      const n = ((await ctx.state.get<number>("n")) ?? 0) + 1;
      await ctx.state.set("n", n);
      await ctx.reply(`count ${n}`);
    });
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "10m" });
      await ctx.reply(`one ${size.text}`);
    });
  },
});

describe("stop, then start", () => {
  test("keeps ctx.state and an open dialog, and catches up what was posted while down", async ({
    runBot,
  }) => {
    const bot = await runBot({ bot: counter, name: "counter" });
    const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
    expect((await bot.ask(MEMBER, dm("count"))).content).toBe("count 1");
    expect((await bot.ask(OWNER, dm("order"))).content).toBe("Which size?");

    await bot.stop();
    const counted = bot.post(MEMBER, dm("count"));
    const answered = bot.post(OWNER, dm("large"));
    await expect(bot.handled(counted)).rejects.toThrow(
      "counter is stopped: start() it before waiting for a message to be handled",
    );
    await bot.start();

    const inDmWith = (email: string) => (m: { display_recipient: unknown }) =>
      Array.isArray(m.display_recipient) && m.display_recipient.some((r) => r.email === email);
    expect((await bot.nextReply({ after: counted, where: inDmWith(MEMBER) })).content).toBe("count 2");
    expect((await bot.nextReply({ after: answered, where: inDmWith(OWNER) })).content).toBe("one large");
    // Running again on the same state: the next message goes on from there.
    expect((await bot.ask(MEMBER, dm("count"))).content).toBe("count 3");
  });

  test("dialogs() of a stopped bot lists the dialogs its state keeps, as bothost dialogs does", async ({
    runBot,
  }) => {
    const bot = await runBot({ bot: counter, name: "counter" });
    const order = bot.post(OWNER, { type: "direct", to: [bot.email], content: "order" });
    await bot.handled(order);
    const open = bot.dialogs();
    expect(open).toMatchObject([{ userName: "Olive Owner", step: 1 }]);
    await bot.stop();
    expect(bot.dialogs()).toEqual(open);
    await bot.stop({ wipe: true });
    expect(bot.dialogs()).toEqual([]);
  });

  test("start() refuses a bot that runs, and one whose state was wiped", async ({ runBot }) => {
    const bot = await runBot({ bot: counter, name: "counter" });
    await expect(bot.start()).rejects.toThrow("counter is running: stop() it before start()");
    await bot.stop({ wipe: true });
    await expect(bot.start()).rejects.toThrow("counter cannot start: stop({ wipe: true }) deleted its state");
    // A second stop does nothing more.
    await bot.stop();
  });

  test("restart() after a stop starts the bot on its state", async ({ runBot }) => {
    const bot = await runBot({ bot: counter, name: "counter" });
    const dm = (content: string) => ({ type: "direct" as const, to: [bot.email], content });
    expect((await bot.ask(MEMBER, dm("count"))).content).toBe("count 1");
    await bot.stop();
    await bot.restart();
    expect((await bot.ask(MEMBER, dm("count"))).content).toBe("count 2");
  });
});
