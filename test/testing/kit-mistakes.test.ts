/**
 * A test's own mistakes, as the testing kit reports them: where in the test's code, in words
 * that name what to change, never a stack trace of the kit's internals.
 */
import { describe, expect, test } from "bothost/testing/vitest";

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
