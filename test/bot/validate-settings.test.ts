/**
 * Bot settings checked against the module's schema, each problem at its line in the config, and
 * loadBots reporting every bot's problems at once.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadBots } from "../../src/bot/load-bots.ts";
import { loadBotModule } from "../../src/bot/load-module.ts";
import { isModuleError } from "../../src/bot/module-error.ts";
import { channelSetting, groupSetting } from "../../src/bot/named-settings.ts";
import { validateBotSettings } from "../../src/bot/validate-settings.ts";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfigWithSource } from "../../src/config/load-config.ts";

const DIR = "test/fixtures/bots";
const configDir = path.resolve(DIR);
const env = { GREETER_API_KEY: "greeter-fake-key-0021" };

async function configError(run: () => Promise<unknown>) {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isConfigError(err)) throw new Error(`expected a ConfigError, got ${String(err)}`);
  expect(err.code).toBe("CONFIG_INVALID");
  expect(err.format()).not.toContain("short-fake-token-0020");
  return err;
}

describe("validateBotSettings", () => {
  it("returns the parsed settings, defaults applied", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const { definition } = await loadBotModule("./with-settings.ts", { configDir });
    const settings = await validateBotSettings("greeter", definition, config.bots.greeter?.settings, source);
    expect(settings).toEqual({ greeting: "Hello", threshold: 3, mode: "lenient", channels: ["general"] });
  });

  it("returns undefined for a module without a schema and no settings", async () => {
    const { source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const { definition } = await loadBotModule("./esm.mjs", { configDir });
    expect(await validateBotSettings("plain", definition, undefined, source)).toBeUndefined();
  });

  it("reports every problem at its config line, without echoing a token", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bad-settings.yaml`, { env });
    const { definition } = await loadBotModule("./with-settings.ts", { configDir });
    const err = await configError(() =>
      validateBotSettings("greeter", definition, config.bots.greeter?.settings, source),
    );
    expect(err.format()).toMatchInlineSnapshot(`
      "test/fixtures/bots/bad-settings.yaml:9:7 bots.greeter.settings.greting: is not a setting of this bot: did you mean "greeting"?
      test/fixtures/bots/bad-settings.yaml:10:18 bots.greeter.settings.threshold: must be a number, not text (remove the quotes)
      test/fixtures/bots/bad-settings.yaml:11:13 bots.greeter.settings.mode: must be one of strict, lenient, not "STRICT": did you mean "strict"?
      test/fixtures/bots/bad-settings.yaml:12:22 bots.greeter.settings.webhook_token: must be at least 40 characters long
      test/fixtures/bots/bad-settings.yaml:13:17 bots.greeter.settings.channels: must be a list, not text"
    `);
  });

  it("points a missing required field at the bot", async () => {
    const { source } = await loadConfigWithSource(`${DIR}/bad-settings.yaml`, { env });
    const { definition } = await loadBotModule("./with-settings.ts", { configDir });
    const err = await configError(() =>
      validateBotSettings("missing-threshold", definition, undefined, source),
    );
    expect(err.format()).toMatchInlineSnapshot(
      `"test/fixtures/bots/bad-settings.yaml:14:3 bots.missing-threshold.settings.threshold: is missing: add it"`,
    );
  });

  it("says missing of an absent channel, group, union or enum setting, not which kinds it takes", async () => {
    const { source } = await loadConfigWithSource(`${DIR}/bad-settings.yaml`, { env });
    const definition = {
      settings: z.object({
        channel: channelSetting(),
        group: groupSetting(),
        limit: z.union([z.number(), z.literal("none")]),
        mode: z.enum(["strict", "lenient"]),
      }),
      setup() {},
    };
    const err = await configError(() =>
      validateBotSettings("missing-threshold", definition, undefined, source),
    );
    expect(err.format()).toMatchInlineSnapshot(`
      "test/fixtures/bots/bad-settings.yaml:14:3 bots.missing-threshold.settings.channel: is missing: add it
      test/fixtures/bots/bad-settings.yaml:14:3 bots.missing-threshold.settings.group: is missing: add it
      test/fixtures/bots/bad-settings.yaml:14:3 bots.missing-threshold.settings.limit: is missing: add it
      test/fixtures/bots/bad-settings.yaml:14:3 bots.missing-threshold.settings.mode: is missing: add it"
    `);
  });

  it("names every form of a union of a type and literals a wrong value misses", async () => {
    const { source } = await loadConfigWithSource(`${DIR}/bad-settings.yaml`, { env });
    const limit = z.union([z.number(), z.literal("none")]);
    const definition = { settings: z.object({ a: limit, b: limit, c: limit }), setup() {} };
    const err = await configError(() =>
      validateBotSettings("missing-threshold", definition, { a: "lots", b: true, c: "non" }, source),
    );
    expect(err.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'bots.missing-threshold.settings.a: must be a number or one of none, not "lots"',
      "bots.missing-threshold.settings.b: must be a number or one of none, not true",
      'bots.missing-threshold.settings.c: must be a number or one of none, not "non": did you mean "none"?',
    ]);
  });

  it("refuses settings for a module without a schema", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bad-settings.yaml`, { env });
    const { definition } = await loadBotModule("./esm.mjs", { configDir });
    const err = await configError(() =>
      validateBotSettings("no-schema", definition, config.bots["no-schema"]?.settings, source),
    );
    expect(err.format()).toMatchInlineSnapshot(
      `"test/fixtures/bots/bad-settings.yaml:22:5 bots.no-schema.settings: is set, but the bot's module declares no settings schema: remove it, or add settings: z.object({ … }) to the module"`,
    );
  });

  it("runs async refinements", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bad-settings.yaml`, { env });
    const { definition } = await loadBotModule("./settings-check-async.ts", { configDir });
    const err = await configError(() =>
      validateBotSettings("async", definition, config.bots.async?.settings, source),
    );
    expect(err.format()).toMatchInlineSnapshot(
      `"test/fixtures/bots/bad-settings.yaml:27:23 bots.async.settings.name: is taken: pick another name"`,
    );
  });
});

describe("validateBotSettings with a union of objects", () => {
  const Verify = z.discriminatedUnion("type", [
    z.object({ type: z.literal("github"), secret: z.string() }),
    z.object({ type: z.literal("hmac"), secret: z.string(), header: z.string().optional() }),
    z.object({ type: z.literal("bearer"), token: z.string() }),
  ]);
  const definition = {
    settings: z.object({ verify: Verify, fallback: Verify.optional() }),
    setup() {},
  };

  it("holds each value to the fields of the option it is, not to the first option's", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/union-settings.yaml`);
    expect(await validateBotSettings("signed", definition, config.bots.signed?.settings, source)).toEqual({
      verify: { type: "hmac", secret: "fake-hmac-secret", header: "Stripe-Signature" },
      fallback: { type: "bearer", token: "fake-bearer-token" },
    });
    const err = await configError(() =>
      validateBotSettings("typo", definition, config.bots.typo?.settings, source),
    );
    expect(err.format()).toMatchInlineSnapshot(
      `"test/fixtures/bots/union-settings.yaml:16:55 bots.typo.settings.verify.headr: is not a setting of this bot: did you mean "header"?"`,
    );
  });
});

describe("loadBots", () => {
  it("loads every bot with its settings and event types", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const bots = await loadBots(config, source);
    expect(bots.map((b) => [b.name, b.events, b.settings])).toEqual([
      [
        "greeter",
        ["message", "reaction"],
        { greeting: "Hello", threshold: 3, mode: "lenient", channels: ["general"] },
      ],
      // The config's events win over the module's.
      ["plain", ["message"], undefined],
    ]);
    expect(bots[0]?.config).toBe(config.bots.greeter);
  });

  it("reports the problems of every bot at once, module problems included", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bad-settings.yaml`, { env });
    const err = await configError(() => loadBots(config, source));
    expect(err.format()).toMatchInlineSnapshot(`
      "test/fixtures/bots/bad-settings.yaml:9:7 bots.greeter.settings.greting: is not a setting of this bot: did you mean "greeting"?
      test/fixtures/bots/bad-settings.yaml:10:18 bots.greeter.settings.threshold: must be a number, not text (remove the quotes)
      test/fixtures/bots/bad-settings.yaml:11:13 bots.greeter.settings.mode: must be one of strict, lenient, not "STRICT": did you mean "strict"?
      test/fixtures/bots/bad-settings.yaml:12:22 bots.greeter.settings.webhook_token: must be at least 40 characters long
      test/fixtures/bots/bad-settings.yaml:13:17 bots.greeter.settings.channels: must be a list, not text
      test/fixtures/bots/bad-settings.yaml:14:3 bots.missing-threshold.settings.threshold: is missing: add it
      test/fixtures/bots/bad-settings.yaml:22:5 bots.no-schema.settings: is set, but the bot's module declares no settings schema: remove it, or add settings: z.object({ … }) to the module
      test/fixtures/bots/bad-settings.yaml:27:23 bots.async.settings.name: is taken: pick another name
      test/fixtures/bots/bad-settings.yaml:29:13 bots.lost.module: ./no-such-bot.ts was not found (no file test/fixtures/bots/no-such-bot.ts): check the path; it starts at the config file's folder (MODULE_NOT_FOUND)"
    `);
    expect(err.cause).toBeInstanceOf(AggregateError);
    expect(((err.cause as AggregateError).errors[0] as Error).name).toBe("ModuleError");
  });

  it("loads a module once for all the bots that name it, each with its own settings", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const greeter = config.bots.greeter!;
    const twins = {
      ...config,
      bots: { ...config.bots, twin: { ...greeter, settings: { threshold: 7 } } },
    };
    const [first, plain, twin] = await loadBots(twins, source);
    expect(twin?.definition).toBe(first?.definition);
    expect(twin?.fingerprint).toBe(first?.fingerprint);
    expect(plain?.definition).not.toBe(first?.definition);
    expect(twin?.settings).toMatchObject({ threshold: 7, channels: [] });
    expect(first?.settings).toMatchObject({ threshold: 3, channels: ["general"] });
  });

  it("throws the ModuleError itself when it is the only problem and in the module's code", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const invalid = { ...config, bots: { lost: { ...config.bots.plain!, module: "./no-setup.ts" } } };
    const err = await loadBots(invalid, source).catch((e: unknown) => e);
    expect(isModuleError(err) && err.code).toBe("MODULE_INVALID");
  });

  it("a module that is not found is a located config problem, the ModuleError in its cause", async () => {
    const { config, source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const lost = { ...config, bots: { lost: { ...config.bots.plain!, module: "./gone.mjs" } } };
    const err = await loadBots(lost, source).catch((e: unknown) => e);
    if (!isConfigError(err)) throw err;
    expect(err.problems).toEqual([
      expect.objectContaining({
        path: "bots.lost.module",
        message: expect.stringContaining("(MODULE_NOT_FOUND)"),
      }),
    ]);
    const [cause] = (err.cause as AggregateError).errors;
    expect(isModuleError(cause) && cause.code).toBe("MODULE_NOT_FOUND");
  });
});

describe("a secret setting's problem", () => {
  const secretSchema = {
    settings: z.object({
      secret: z.string().min(8, { error: "is too short: use a secret of at least 8 characters" }),
    }),
    setup() {},
  };

  it("keeps the module's words whole when the secret is one of them", async () => {
    const { source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const err = await configError(() =>
      validateBotSettings("greeter", secretSchema, { secret: "short" }, source),
    );
    expect(err.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "bots.greeter.settings.secret: is too short: use a secret of at least 8 characters",
    ]);
  });

  it("still hides a secret that a custom check quotes", async () => {
    const quoting = {
      settings: z.object({
        secret: z.string().refine((s) => s.length > 40, { error: (i) => `${String(i.input)} is bad` }),
      }),
      setup() {},
    };
    const { source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const err = await configError(() =>
      validateBotSettings("greeter", quoting, { secret: "leaky-secret-value" }, source),
    );
    expect(err.format()).not.toContain("leaky-secret-value");
    expect(err.format()).toContain("[hidden] is bad");
  });
});

describe("a URL setting that is not a URL", () => {
  it("is said in the project's words, at its path, not zod's bare Invalid URL", async () => {
    const bot = { settings: z.object({ base_url: z.string().url() }), setup() {} };
    const { source } = await loadConfigWithSource(`${DIR}/bothost.yaml`, { env });
    const err = await configError(() =>
      validateBotSettings("greeter", bot, { base_url: "api.example" }, source),
    );
    expect(err.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "bots.greeter.settings.base_url: is not a URL: write a whole address with its scheme and host (and a port up to 65535), like https://example.org/path",
    ]);
  });
});
