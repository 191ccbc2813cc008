/**
 * A test's own mistakes, as the testing kit reports them: where in the test's code, in words
 * that name what to change, never a stack trace of the kit's internals.
 */
import { runBot as runBotOn } from "bothost/testing";
import { describe, expect, test } from "bothost/testing/vitest";

/** The plain runBot called as a test might get it wrong. */
const runBotWith = runBotOn as (...args: unknown[]) => ReturnType<typeof runBotOn>;

describe("a bot that does not start", () => {
  test("a setup that throws is named where it threw, the error kept as the cause", async ({ runBot }) => {
    const err = await runBot({ bot: "./test/fixtures/bots/setup-throws.ts", name: "throws" }).catch(
      (e: Error) => e,
    );
    if (!(err instanceof Error)) throw new Error("runBot started the bot");
    expect(err.message).toBe(
      "the bot did not start: its code threw TypeError at test/fixtures/bots/setup-throws.ts:5:17: Cannot read properties of undefined (reading 'now')",
    );
    expect(err.cause).toBeInstanceOf(TypeError);
  });

  test("a setup written in the test itself is named at its line there", async ({ runBot }) => {
    const setup = () => {
      throw new RangeError("no such room");
    };
    const err = await runBot({ bot: { setup }, name: "inline" }).catch((e: Error) => e);
    expect(err).toMatchObject({
      message: expect.stringMatching(
        /^the bot did not start: its code threw RangeError at test\/testing\/kit-mistakes\.test\.ts:\d+:\d+: no such room$/,
      ),
      cause: expect.any(RangeError),
    });
  });
});

describe("a value that is no bot", () => {
  test("fails runBot as a module that exports no bot does, with MODULE_INVALID", async ({ runBot }) => {
    const err = await runBot({ bot: { hello: 1 } as never, name: "hello" }).catch((e: Error) => e);
    expect(err).toMatchObject({
      code: "MODULE_INVALID",
      message: "runBot: the bot given has no setup function: add setup(bot, settings) { … } to it",
    });
    await expect(runBot({ bot: (() => {}) as never })).rejects.toThrow(
      "runBot: the bot given is a function, not a bot: pass defineBot({ setup: yourFunction })",
    );
    await expect(runBot({ bot: { setup() {}, events: ["mesage"] } as never })).rejects.toThrow(
      'runBot: the bot given lists the unknown event type "mesage": did you mean "message"?',
    );
  });

  test("restart({ bot }) with one is refused before the bot stops", async ({ runBot }) => {
    const bot = await runBot({ bot: { setup() {} }, name: "kept" });
    await expect(bot.restart({ bot: 42 as never })).rejects.toMatchObject({
      code: "MODULE_INVALID",
      message:
        "restart: the bot given is a number, not a bot: pass what defineBot({ setup(bot, settings) { … } }) returned",
    });
    expect(bot.dialogs()).toEqual([]);
    await expect(bot.start()).rejects.toThrow("kept is running: stop() it before start()");
  });
});

describe("runBot's arguments", () => {
  test("a missing sandbox, options or bot is named", async ({ sandbox, runBot }) => {
    const invalid = (message: string) => ({ code: "INVALID_ARGUMENT", message });
    await expect(runBotWith()).rejects.toMatchObject(
      invalid(
        "runBot: the first argument must be the sandbox startSandbox() returned, got nothing: call runBot(sandbox, { bot, … })",
      ),
    );
    await expect(runBotWith(sandbox)).rejects.toMatchObject(
      invalid("runBot: the options must be an object, got nothing: call runBot(sandbox, { bot, … })"),
    );
    await expect(runBotWith({ bot: { setup() {} } })).rejects.toMatchObject(
      invalid(
        "runBot: the first argument must be the sandbox startSandbox() returned, got an object: call runBot(sandbox, { bot, … }) (the vitest fixture's runBot is the one that takes the options alone)",
      ),
    );
    const noBot = invalid("runBot: no bot given: pass { bot }, what defineBot returned or a module path");
    await expect(runBotWith(sandbox, {})).rejects.toMatchObject(noBot);
    await expect((runBot as (o?: object) => Promise<unknown>)()).rejects.toMatchObject(noBot);
  });
});
