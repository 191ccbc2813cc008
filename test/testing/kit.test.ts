/**
 * bothost/testing as a bot's author uses it: imported by package name (the built entries, through
 * package.json's exports), the vitest fixture, a shipped bot run in-process against the sandbox.
 */
import { defineBot } from "bothost";
import { describe, expect, test } from "bothost/testing/vitest";
import echo from "../../bots/echo.ts";

const MEMBER = "member@sandbox.example";

describe("the vitest fixture", () => {
  test("runs a shipped bot and awaits its reply to a direct message", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo", settings: { prefix: "echo: " } });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "hello there" });
    expect(reply.content).toBe("echo: hello there");
    expect(reply.type).toBe("private");
    expect(bot.replies()).toHaveLength(1);
  });

  test("loads a bot from a module path", async ({ runBot }) => {
    const bot = await runBot({ bot: "./bots/echo.ts", name: "echo" });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "by path" });
    expect(reply.content).toBe("by path");
  });

  test("says clearly when the bot does not answer in time", async ({ runBot }) => {
    const silent = defineBot({ setup: () => {} });
    const bot = await runBot({ bot: silent, name: "silent" });
    await expect(
      bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "anyone?" }, { timeoutMs: 300 }),
    ).rejects.toThrow(/^silent sent no message after message \d+ within 300 ms$/);
  });

  test("faults injected in the sandbox: a reply that failed with a 503 is sent by the handler's retry", async ({
    sandbox,
    runBot,
  }) => {
    const bot = await runBot({ bot: echo, name: "echo", config: "retries: { attempts: 3, backoff: 100ms }" });
    sandbox.control.failNext(1, { status: 503, paths: [/^\/messages$/] });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "despite it all" });
    expect(reply.content).toBe("despite it all");
    expect(bot.logs().some((l) => l.msg === "handler failed; running it again after a pause")).toBe(true);
  });
});
