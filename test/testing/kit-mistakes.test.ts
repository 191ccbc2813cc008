/**
 * A test's own mistakes, as the testing kit reports them: where in the test's code, in words
 * that name what to change, never a stack trace of the kit's internals.
 */
import { fileURLToPath } from "node:url";
import { defineBot } from "bothost";
import { runBot as runBotOn, type SendAsInput } from "bothost/testing";
import { createBotTest, describe, expect, test } from "bothost/testing/vitest";
import { RELEASE_ORG } from "../support/release-org.ts";

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
    // The cause's stack (a test runner prints it) shows where the setup threw, not bothost's callers.
    const stack = (err.cause as Error).stack!.split("\n");
    expect(stack[1]).toMatch(/test\/fixtures\/bots\/setup-throws\.ts:5:17\)?$/);
    expect(stack.filter((line) => /\/(dist|src)\//.test(line))).toEqual([]);
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

describe("runBot's options", () => {
  const invalid = (message: string) => ({ code: "INVALID_ARGUMENT", message });
  const quiet = { setup() {} };

  test("an unknown option or one of the wrong type is named before the bot starts", async ({
    runBot,
    sandbox,
  }) => {
    const run = runBot as unknown as (options: Record<string, unknown>) => Promise<unknown>;
    const takes =
      "(it takes bot, name, email, channels, settings, config, daemon, clock, outgoingWebhook, webhooks)";
    await expect(run({ bot: quiet, name: "typo", webhook: true })).rejects.toMatchObject(
      invalid(`runBot: webhook is not an option: did you mean webhooks? ${takes}`),
    );
    await expect(run({ bot: quiet, name: "email", email: 5 })).rejects.toMatchObject(
      invalid("runBot: email must be a string, got 5"),
    );
    await expect(run({ bot: quiet, name: "chans", channels: "general" })).rejects.toMatchObject(
      invalid(
        'runBot: channels must be a list of channel names, got the string "general": channels: ["general"]',
      ),
    );
    await expect(run({ bot: quiet, name: "hooks", webhooks: "yes" })).rejects.toMatchObject(
      invalid('runBot: webhooks must be true or false, got the string "yes"'),
    );
    await expect(run({ bot: quiet, name: "Bad Name" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(
      run({ bot: quiet, name: "late", outgoingWebhook: { deadline: 3000 } }),
    ).rejects.toMatchObject(
      invalid("runBot: outgoingWebhook.deadline is not an option: it takes interface and replyDeadlineMs"),
    );
    const running = (await run({ bot: quiet, name: "twice" })) as { start(): Promise<void> };
    await expect(running.start()).rejects.toMatchObject(
      invalid("twice is running: stop() it before start()"),
    );
    // Nothing was created on the sandbox for them.
    expect(sandbox.control.users().filter((u) => u.email.startsWith("chans"))).toEqual([]);
  });
});

describe("a running bot's members", () => {
  const MEMBER = "member@sandbox.example";
  const invalid = (message: string) => ({ code: "INVALID_ARGUMENT", message });
  const quiet = { setup() {} };

  test("react without who reacts says to give { as }", async ({ runBot }) => {
    const bot = await runBot({ bot: quiet, name: "quiet" });
    const id = bot.post(MEMBER, { type: "channel", to: "general", topic: "t", content: "hi" });
    const react = bot.react as (...args: unknown[]) => Promise<void>;
    await expect(react(id, "tada")).rejects.toMatchObject(
      invalid(
        'react: say who reacts, in the options: react(message, emoji, { as: "member@sandbox.example" })',
      ),
    );
    await expect(react(id, "tada", { remove: true })).rejects.toMatchObject(
      invalid(
        'react: as must be the email of who reacts, got nothing: react(message, emoji, { as: "member@sandbox.example" })',
      ),
    );
    await expect(react(String(id), "tada", { as: MEMBER })).rejects.toMatchObject(
      invalid(`react: the message must be its id or a message the kit returned, got the string "${id}"`),
    );
  });

  test("handled and progress given no number say so, not that the message is missing", async ({ runBot }) => {
    const listening = defineBot({ setup: (b) => void b.on("message", () => {}) });
    const bot = await runBot({ bot: listening, name: "listening" });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
    await expect(bot.handled(String(id) as never)).rejects.toMatchObject(
      invalid(`handled: the message id must be a number, got the string "${id}"`),
    );
    await expect(bot.handled(bot.replies as never)).rejects.toMatchObject(
      invalid("handled: the message id must be a number, got a function"),
    );
    await expect(bot.progress({ id } as never)).rejects.toMatchObject(
      invalid("progress: the message id must be a number, got an object: give its id, progress(message.id)"),
    );
    await bot.handled(id);
  });

  test("a message of an unknown type names the field and the types there are", async ({ runBot }) => {
    const bot = await runBot({ bot: quiet, name: "quiet" });
    const dm = { type: "dm", to: [bot.email], content: "hi" } as never;
    const types =
      'type must be "direct" or "channel" (or the API\'s "private" or "stream"), got the string "dm"';
    await expect(bot.ask(MEMBER, dm)).rejects.toMatchObject(invalid(`ask: ${types}`));
    expect(() => bot.post(MEMBER, dm)).toThrow(`post: ${types}`);
    expect(() => bot.post(MEMBER, { type: "direct", to: [bot.email] } as never)).toThrow(
      "post: content must be a string, got nothing",
    );
    expect(() => bot.post(MEMBER, { type: "channel", topic: "t", content: "hi" } as never)).toThrow(
      'post: to is missing: say who or where, as in { type: "direct", to: [emails or ids], content } or { type: "channel", to: "general", topic, content }',
    );
    expect(bot.replies()).toEqual([]);
  });
});

describe("a running bot's members given the wrong types", () => {
  const MEMBER = "member@sandbox.example";
  const invalid = (message: string) => ({ code: "INVALID_ARGUMENT", message });
  const listening = defineBot({ setup: (b) => void b.on("message", () => {}) });

  test("who posts must be an email", async ({ runBot }) => {
    const bot = await runBot({ bot: listening, name: "listening" });
    const input: SendAsInput = { type: "direct", to: [bot.email], content: "hi" };
    const told = (where: string, got: string) =>
      `${where}: from must be the email of who posts, got ${got}: ${where}("member@sandbox.example", { type, to, content })`;
    expect(() => bot.post(5 as never, input)).toThrow(told("post", "5"));
    await expect(bot.ask({ email: MEMBER } as never, input)).rejects.toMatchObject(
      invalid(told("ask", "an object")),
    );
    expect(bot.replies()).toEqual([]);
  });

  test("the options of a wait are checked, timeoutMs and after first of all", async ({ runBot }) => {
    const bot = await runBot({ bot: listening, name: "listening" });
    const input: SendAsInput = { type: "direct", to: [bot.email], content: "hi" };
    await expect(bot.ask(MEMBER, input, 100 as never)).rejects.toMatchObject(
      invalid("ask: the options must be an object { timeoutMs }, got 100"),
    );
    await expect(bot.nextReply({ timeoutMs: "1s" } as never)).rejects.toMatchObject(
      invalid(
        'nextReply: timeoutMs must be a number of milliseconds above 0, got the string "1s" ("1s" is timeoutMs: 1000)',
      ),
    );
    await expect(bot.nextReply(7 as never)).rejects.toMatchObject(
      invalid(
        "nextReply: the options must be an object { after, timeoutMs, where }, got 7 (nextReply({ after: 7 }))",
      ),
    );
    const id = bot.post(MEMBER, input);
    await expect(bot.nextReply({ after: bot.post as never })).rejects.toMatchObject(
      invalid("nextReply: after must be a message's id, got a function"),
    );
    await expect(bot.nextReply({ after: { id } } as never)).rejects.toMatchObject(
      invalid("nextReply: after must be a message's id, got an object: give its id, { after: message.id }"),
    );
    await expect(bot.nextReply({ where: "stream" } as never)).rejects.toMatchObject(
      invalid(
        'nextReply: where must be a function of the message, got the string "stream": { where: (m) => … }',
      ),
    );
    await expect(bot.handled(id, { timeout: 100 } as never)).rejects.toMatchObject(
      invalid("handled: timeout is not an option: it takes { timeoutMs }"),
    );
    await bot.handled(id);
  });

  test("webhook's request is { body, headers, method }", async ({ runBot }) => {
    const hooked = defineBot({
      setup: (b) => void b.webhook("hook", { verify: { type: "none" } }, () => {}),
    });
    const bot = await runBot({ bot: hooked, name: "hooked", webhooks: true });
    await expect(bot.webhook("hook", "a=1" as never)).rejects.toMatchObject(
      invalid('webhook: the request must be { body, headers, method }, got the string "a=1"'),
    );
    await expect(bot.webhook("hook", { boddy: {} } as never)).rejects.toMatchObject(
      invalid("webhook: boddy is not a field of the request: it takes { body, headers, method }"),
    );
    await expect(bot.webhook("hook", { headers: "x-token: 1" } as never)).rejects.toMatchObject(
      invalid('webhook: headers must be an object of names and values, got the string "x-token: 1"'),
    );
    await expect(bot.webhook("hook", { headers: { "x-count": 5 } } as never)).rejects.toMatchObject(
      invalid('webhook: header "x-count" must be a string, got 5'),
    );
    await expect(bot.webhook("hook", { method: 5 } as never)).rejects.toMatchObject(
      invalid('webhook: method must be an HTTP method ("POST", "GET", …), got 5'),
    );
    expect((await bot.webhook("hook", { body: { a: 1 } })).status).toBe(200);
  });

  test("stop and restart take their options as an object", async ({ runBot }) => {
    const bot = await runBot({ bot: listening, name: "listening" });
    await expect(bot.restart(true as never)).rejects.toMatchObject(
      invalid("restart: the options must be an object { crash, bot }, got true"),
    );
    await expect(bot.stop("crash" as never)).rejects.toMatchObject(
      invalid('stop: the options must be an object { crash, wipe }, got the string "crash"'),
    );
    await expect(bot.stop({ crash: "yes" } as never)).rejects.toMatchObject(
      invalid('stop: crash must be true or false, got the string "yes"'),
    );
    // Refused before anything stopped: the bot still runs.
    await expect(bot.start()).rejects.toThrow("listening is running: stop() it before start()");
  });
});

describe("the clock", () => {
  test("advance given a duration as text says it takes milliseconds", async ({ clock }) => {
    const advance = clock.advance.bind(clock) as (ms: unknown) => Promise<void>;
    const before = clock.now();
    await expect(advance("5m")).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message:
        'advance: ms must be a number of milliseconds, got the string "5m" ("5m" is clock.advance(300000))',
    });
    await expect(advance(undefined)).rejects.toThrow(
      "advance: ms must be a number of milliseconds, got nothing",
    );
    await expect(advance(-5)).rejects.toThrow("advance: ms must be 0 or more, not -5");
    expect(clock.now() - before).toBeLessThan(60_000);
  });
});

describe("an org without the default channel", () => {
  const inOps = createBotTest({ org: RELEASE_ORG });
  const invalid = (message: string) => ({ code: "INVALID_ARGUMENT", message });
  const quiet = { setup() {} };
  inOps("a bot made for the test says which option names its channels", async ({ runBot, sandbox }) => {
    const err = await runBot({ bot: quiet, name: "newbot" }).catch((e: Error) => e);
    expect(err).toMatchObject(
      invalid(
        'runBot: the org has no account newbot-bot@sandbox.example, so one is made in the channels ["general"]: No channel named "general". Give the org\'s channels with `channels`, or an email the org has.',
      ),
    );
    expect(sandbox.control.users().filter((u) => u.email.startsWith("newbot"))).toEqual([]);
    const bot = await runBot({ bot: quiet, name: "newbot", channels: ["ops"] });
    expect(bot.email).toBe("newbot-bot@sandbox.example");
  });
});

describe("an email the sandbox has no account for", () => {
  const listening = defineBot({ setup: (b) => void b.on("message", () => {}) });
  const people =
    "(it has owner@sandbox.example, member@sandbox.example, bot@sandbox.example, listening-bot@sandbox.example)";

  test("who posts or reacts is named, with the email likely meant; a refused recipient with the server's words", async ({
    runBot,
  }) => {
    const bot = await runBot({ bot: listening, name: "listening" });
    const dm = { type: "direct" as const, to: [bot.email], content: "hi" };
    expect(() => bot.post("membr@sandbox.example", dm)).toThrow(
      `post: membr@sandbox.example (who posts) has no account in the sandbox: did you mean member@sandbox.example? ${people}`,
    );
    await expect(bot.ask("nobody@elsewhere.example", dm)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: `ask: nobody@elsewhere.example (who posts) has no account in the sandbox ${people}`,
    });
    await expect(
      bot.ask("member@sandbox.example", { ...dm, to: ["lisening-bot@sandbox.example"] }),
    ).rejects.toThrow(
      "ask: the server refused the message from member@sandbox.example: Invalid email 'lisening-bot@sandbox.example' (BAD_REQUEST)",
    );
    expect(() =>
      bot.post("member@sandbox.example", { type: "channel", to: "genral", topic: "t", content: "hi" }),
    ).toThrow(
      "post: the server refused the message from member@sandbox.example: Channel 'genral' does not exist",
    );
    const id = bot.post("member@sandbox.example", dm);
    await expect(bot.react(id, "tada", { as: "mebmer@sandbox.example" })).rejects.toThrow(
      `react: mebmer@sandbox.example (who reacts) has no account in the sandbox: did you mean member@sandbox.example? ${people}`,
    );
  });
});

describe("the stack of the kit's errors", () => {
  const MEMBER = "member@sandbox.example";
  /** bothost's own code: the stack's frames there, as a test runner shows them (source-mapped to src/). */
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const kitFrames = (err: unknown) =>
    String((err as Error).stack)
      .split("\n")
      .filter(
        (line) => /^\s+at /.test(line) && (line.includes(`${root}src/`) || line.includes(`${root}dist/`)),
      );
  const firstFrame = (err: unknown) =>
    String((err as Error).stack)
      .split("\n")
      .find((l) => /^\s+at /.test(l));
  const listening = defineBot({ setup: (b) => void b.on("message", () => {}) });

  test("starts at the test's own call, for a mistake and for a silent bot", async ({ runBot }) => {
    const errors: unknown[] = [];
    errors.push(await runBot({ bot: listening, nmae: "x" } as never).catch((e: unknown) => e));
    errors.push(await runBot({ bot: listening, settings: { prefx: 1 } }).catch((e: unknown) => e));
    errors.push(await runBot({ bot: "./bots/ecoh.ts" }).catch((e: unknown) => e));
    const bot = await runBot({ bot: listening, name: "listening" });
    const dm = { type: "direct" as const, to: [bot.email], content: "hi" };
    errors.push(await bot.ask("membr@sandbox.example", dm).catch((e: unknown) => e));
    errors.push(await bot.ask(MEMBER, { ...dm, to: ["nobody@sandbox.example"] }).catch((e: unknown) => e));
    try {
      bot.post(MEMBER, { ...dm, type: "dm" } as never);
    } catch (e) {
      errors.push(e);
    }
    errors.push(await bot.react(1, "tada", { as: "membr@sandbox.example" }).catch((e: unknown) => e));
    errors.push(await bot.nextReply({ timeoutMs: 50 }).catch((e: unknown) => e));
    expect(errors).toHaveLength(8);
    for (const err of errors) {
      expect(err).toBeInstanceOf(Error);
      expect(kitFrames(err)).toEqual([]);
      expect(firstFrame(err)).toContain("kit-mistakes.test.ts");
    }
  });

  test("a setup's misuse of the bot API: its cause starts at the setup's line", async ({ runBot }) => {
    const misuse = defineBot({
      setup(bot) {
        (bot.webhook as (...args: unknown[]) => void)("deploys", () => ({}));
      },
    });
    const err = await runBot({ bot: misuse, name: "misuse" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "BOT_SETUP_INVALID", cause: { code: "BOT_SETUP_INVALID" } });
    const cause = (err as Error).cause;
    expect(kitFrames(cause)).toEqual([]);
    expect(firstFrame(cause)).toContain("kit-mistakes.test.ts");
  });

  test("a sandbox.control call's mistake starts at the test's own call", async ({ runBot, sandbox }) => {
    const bot = await runBot({ bot: listening, name: "listening" });
    let err: unknown;
    try {
      sandbox.control.setUserRateLimit("nobody@sandbox.example", [[60, 2]]);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "SANDBOX_CONTROL" });
    expect(kitFrames(err)).toEqual([]);
    expect(firstFrame(err)).toContain("kit-mistakes.test.ts");
    // Its values are the sandbox's own, live: the requests the bot makes after this are in it.
    const requests = sandbox.control.requests;
    const before = requests.length;
    bot.post(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
    await expect.poll(() => requests.length).toBeGreaterThan(before);
  });

  test("a clock given no time says so, from the test's line", async ({ clock }) => {
    const advance = await clock.advance("6m" as never).catch((e: unknown) => e);
    expect(advance).toMatchObject({
      code: "INVALID_ARGUMENT",
      message:
        'advance: ms must be a number of milliseconds, got the string "6m" ("6m" is clock.advance(360000))',
    });
    const to = clock.advanceTo("next tuesday");
    const advanceTo = await to.catch((e: unknown) => e);
    expect(advanceTo).toMatchObject({
      code: "INVALID_ARGUMENT",
      message: "advanceTo: not a date: next tuesday (give an ISO 8601 time, a Date or epoch ms)",
    });
    for (const err of [advance, advanceTo]) {
      expect(kitFrames(err)).toEqual([]);
      expect(firstFrame(err)).toContain("kit-mistakes.test.ts");
    }
  });
});
