/**
 * bothost/testing as a bot's author uses it: imported by package name (the built entries, through
 * package.json's exports), the vitest fixture, a shipped bot run in-process against the sandbox.
 */
import { defineBot } from "bothost";
import { DEFAULT_WAIT_MS } from "bothost/testing";
import { describe, expect, test } from "bothost/testing/vitest";
import echo from "../../bots/echo.ts";

const MEMBER = "member@sandbox.example";

describe("the vitest fixture", () => {
  test("runs a shipped bot and awaits its reply to a direct message", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo", settings: { prefix: "echo: " } });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "hello there" });
    expect(reply.content).toBe("echo: hello there");
    expect(bot.replies()).toEqual([reply]);
    // The server's shape: a direct message lists its people and has no topic.
    if (reply.type !== "private") throw new Error(`expected a direct message, got ${reply.type}`);
    expect(reply.subject).toBe("");
    expect(reply.display_recipient.map((r) => r.email).sort()).toEqual(["echo-bot@sandbox.example", MEMBER]);
    expect(reply.display_recipient.find((r) => r.email === MEMBER)?.full_name).toBe("Mel Member");
  });

  test("a channel reply carries its channel and topic as the server names them", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    const reply = await bot.ask(MEMBER, {
      type: "stream",
      to: "general",
      topic: "greetings",
      content: `@**echo** in the channel`,
    });
    if (reply.type !== "stream") throw new Error(`expected a channel message, got ${reply.type}`);
    expect([reply.display_recipient, reply.subject, reply.content]).toEqual([
      "general",
      "greetings",
      "in the channel",
    ]);
    expect(reply.sender_email).toBe(bot.email);
  });

  test("loads a bot from a module path", async ({ runBot }) => {
    const bot = await runBot({ bot: "./bots/echo.ts", name: "echo" });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "by path" });
    expect(reply.content).toBe("by path");
  });

  test("restart({ bot }) takes a module path too: the new version runs from then on", async ({ runBot }) => {
    const bot = await runBot({ bot: "./test/fixtures/bots/plain.ts", name: "echo" });
    await bot.restart({ bot: "./bots/echo.ts" });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "new version" });
    expect(reply.content).toBe("new version");
  });

  // A test has no config file: a relative path is read from where the tests run.
  test("a module path that names no file says where it was looked for", async ({ runBot }) => {
    await expect(runBot({ bot: "./bots/nope.ts", name: "nope" })).rejects.toThrow(
      "module ./bots/nope.ts was not found (no file bots/nope.ts): check the path; it starts at the current directory",
    );
  });

  // As `bothost run` would: a bare parse of the schema dropped the unknown key and let the test pass.
  test("refuses settings bothost run would refuse, naming each setting's path", async ({ runBot }) => {
    await expect(runBot({ bot: echo, name: "echo", settings: { prefx: "echo: " } })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message:
        'echo\'s settings would be refused by bothost run:\n  bots.echo.settings.prefx: is not a setting of this bot: did you mean "prefix"?',
    });
    await expect(runBot({ bot: echo, name: "echo", settings: { prefix: 5 } })).rejects.toThrow(
      "  bots.echo.settings.prefix: must be text, not a whole number",
    );
  });

  // The kit writes the entry to a temporary file the test never sees: a problem is located in
  // the `config` lines the test gave, not at a line of that file.
  test("locates a problem of its config in the lines given, not in a temporary file", async ({ runBot }) => {
    const refusal = async (config: string) => {
      const err = await runBot({ bot: echo, name: "echo", config }).catch((e: Error) => e);
      if (!(err instanceof Error)) throw new Error("runBot started the bot");
      expect(err.message).not.toMatch(/bothost-daemon-|\.yaml/);
      // The loader's code kept: a test can tell a refused config from another failure.
      expect((err as { code?: string }).code).toMatch(/^CONFIG_/);
      return err.message;
    };
    expect(await refusal("retries: { attempt: 1 }")).toBe(
      'echo\'s config would be refused by bothost run:\n  config:1:12 retries.attempt: is not a known key: did you mean "attempts"?',
    );
    expect(await refusal("handler_timeout: 5s\nhandler_timeout: 6s")).toBe(
      "echo's config would be refused by bothost run:\n  config:2:1 handler_timeout: is set twice (also on line 1 of its config): keep one of them",
    );
    // A key the kit writes itself is not "set twice (also on line 8)" of a file the test never saw.
    expect(await refusal("email: other-bot@sandbox.example")).toBe(
      "echo's config would be refused by bothost run:\n  config:1:1 email: is set by runBot itself: give it as runBot's email option",
    );
    expect(await refusal("module: ./bots/echo.ts")).toBe(
      "echo's config would be refused by bothost run:\n  config:1:1 module: is set by runBot itself: give the bot as runBot's bot option",
    );
    // A key of the config's top level is not "unknown": it is the daemon's, given as runBot's daemon.
    expect(await refusal("shutdown_timeout: 1s")).toBe(
      "echo's config would be refused by bothost run:\n  config:1:1 shutdown_timeout: is not a bot's setting: it is set for the whole daemon, given in runBot's daemon",
    );
    expect(await refusal("retries: [")).toMatch(
      /^echo's config would be refused by bothost run:\n {2}config:1:\d+ YAML syntax error: /,
    );
  });

  test("a setup bothost run would refuse fails runBot with the setup's code", async ({ runBot }) => {
    const wrong = defineBot({
      setup(bot) {
        bot.cron("*/5 * * *", () => {});
      },
    });
    const err = await runBot({ bot: wrong, name: "wrong" }).catch((e: Error) => e);
    if (!(err instanceof Error)) throw new Error("runBot started the bot");
    expect(err.message).toMatch(
      /^the bot did not start: test\/testing\/kit\.test\.ts:\d+:\d+: bot\.cron\("\*\/5 \* \* \*"\): expected 5 fields/,
    );
    // A test tells a refused declaration from another failure by its code, as with a config.
    expect((err as { code?: string }).code).toBe("BOT_SETUP_INVALID");
  });

  test("says clearly when the bot does not answer in time, naming what was posted", async ({ runBot }) => {
    const silent = defineBot({
      setup(bot) {
        bot.on("message", () => {});
      },
    });
    const bot = await runBot({ bot: silent, name: "silent" });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "anyone?" });
    await bot.handled(id);
    await expect(bot.nextReply({ after: id, timeoutMs: 300 })).rejects.toThrow(
      `silent sent no message after message ${id} ("anyone?" from ${MEMBER} in a direct message to silent-bot@sandbox.example) within 300 ms (it handled that message without answering)`,
    );
  });

  test("after the bot's own message, does not say the bot handled it", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "once" });
    await expect(bot.nextReply({ after: reply.id, timeoutMs: 300 })).rejects.toThrow(
      new RegExp(
        `^echo sent no message after message ${reply.id} \\("once" from echo-bot@sandbox\\.example in a direct message to ${MEMBER}\\) within 300 ms$`,
      ),
    );
  });

  // vitest's own default test timeout is 5 s: the kit's default wait must give up first.
  test("by default gives up with its own message before vitest's default test timeout", {
    timeout: 5_000,
  }, async ({ runBot }) => {
    const bot = await runBot({ bot: defineBot({ setup: () => {} }), name: "mute" });
    await expect(
      bot.ask(MEMBER, { type: "stream", to: "general", topic: "t", content: "hello?" }),
    ).rejects.toThrow(
      new RegExp(
        `^mute sent no message after message \\d+ \\("hello\\?" from ${MEMBER} in #general > t\\) within ${DEFAULT_WAIT_MS} ms$`,
      ),
    );
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
