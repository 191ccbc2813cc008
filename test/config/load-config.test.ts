// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} references under test.
/**
 * Good configs: what loadConfig returns, with interpolation, defaults, overrides and key files.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadBots } from "../../src/bot/load-bots.ts";
import { ConfigError, isConfigError } from "../../src/config/config-error.ts";
import { loadConfig, loadConfigWithSource } from "../../src/config/load-config.ts";

const GOOD = "test/fixtures/config/good";
const goodDir = path.resolve(GOOD);
const ENV = {
  ECHO_BOT_API_KEY: "echo-fake-key-0010",
  MODERATION_BOT_API_KEY: "moderation-fake-key-0011",
  MODERATOR_WEBHOOK_TOKEN: "webhook-fake-token-0012",
};

describe("loadConfig on good files", () => {
  it("applies every default to a minimal file", async () => {
    const config = await loadConfig(`${GOOD}/minimal.yaml`, { env: ENV });
    expect(config).toEqual({
      server: { url: "https://chat.example.org" },
      state: { path: path.join(goodDir, ".bothost") },
      log: { level: "info", pretty: "auto" },
      shutdown_timeout: 10_000,
      registration_concurrency: 4,
      longpoll_margin: 10_000,
      bots: {
        echo: {
          module: "./bots/echo.ts",
          email: "echo-bot@chat.example.org",
          api_key: "echo-fake-key-0010",
          server: { url: "https://chat.example.org" },
          own_messages: false,
          concurrency: 8,
          dry_run: false,
          handler_timeout: 30_000,
          replay: { max_messages: 1_000, max_age: 86_400_000 },
          long_messages: "split",
          retries: { attempts: 5, backoff: 2_000, max_backoff: 30_000, dead_letters: 1_000 },
          rate_limit: { per_minute: 200, per_hour: 2_000 },
        },
      },
    });
  });

  it("returns a deeply frozen object", async () => {
    const config = await loadConfig(`${GOOD}/full.yaml`, { env: ENV });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.bots.moderator?.narrow)).toBe(true);
    expect(Object.isFrozen(config.bots.moderator?.narrow?.[0])).toBe(true);
    expect(Object.isFrozen(config.bots.moderator?.settings)).toBe(true);
    expect(() => {
      (config.bots as Record<string, unknown>).intruder = {};
    }).toThrow(TypeError);
  });

  it("reads every option of the full file", async () => {
    const config = await loadConfig(`${GOOD}/full.yaml`, { env: ENV });
    expect(config.http).toEqual({ listen: "127.0.0.1:8080", body_limit: 1_048_576, request_timeout: 30_000 });
    expect(config.log).toEqual({ level: "debug", pretty: false });
    expect(config.shutdown_timeout).toBe(5_000);
    expect(config.registration_concurrency).toBe(2);
    expect(config.state.path).toBe(path.join(goodDir, "state"));
    expect(config.bots.moderator).toEqual({
      module: "./bots/moderation.ts",
      email: "moderation-bot@chat.example.org",
      api_key: "moderation-fake-key-0011",
      server: { url: "https://chat.example.org" },
      events: ["message", "reaction"],
      narrow: [
        ["channel", "general"],
        ["topic", "help desk"],
      ],
      all_public_streams: true,
      own_messages: true,
      // From <<: *limits, where ${BOT_CONCURRENCY:-4} is unquoted and so becomes a number.
      concurrency: 4,
      dry_run: false,
      handler_timeout: 90_000,
      long_messages: "split",
      replay: { max_messages: 50, max_age: 7_200_000 },
      retries: { attempts: 3, backoff: 500, max_backoff: 10_000, dead_letters: 200 },
      rate_limit: { per_minute: 400, per_hour: 8_000 },
      outgoing_webhook: { path: "/hooks/moderator", token: "webhook-fake-token-0012", reply_deadline: 8_000 },
      webhooks: { github: { idempotency_window: 129_600_000 }, deploys: { idempotency_window: 259_200_000 } },
      settings: { threshold: 3, greeting: "cost: ${PRICE}" },
    });
  });

  it("interpolates with defaults and types unquoted results", async () => {
    const config = await loadConfig(`${GOOD}/full.yaml`, {
      env: { ...ENV, CHAT_URL: "https://env.example.org/", LOG_LEVEL: "warn", BOT_CONCURRENCY: "16" },
    });
    expect(config.server?.url).toBe("https://env.example.org");
    expect(config.log.level).toBe("warn");
    expect(config.bots.moderator?.concurrency).toBe(16);
  });

  it("uses a default when the variable is set but empty", async () => {
    const config = await loadConfig(`${GOOD}/full.yaml`, { env: { ...ENV, LOG_LEVEL: "" } });
    expect(config.log.level).toBe("debug");
  });

  it("never interpolates a value twice", async () => {
    const config = await loadConfig(`${GOOD}/minimal.yaml`, {
      env: { ECHO_BOT_API_KEY: "${MODERATION_BOT_API_KEY}", MODERATION_BOT_API_KEY: "leaked" },
    });
    expect(config.bots.echo?.api_key).toBe("${MODERATION_BOT_API_KEY}");
  });

  it("gives a bot its own server, reads api_key_file (trimmed) and resolves paths from the config's folder", async () => {
    const config = await loadConfig(`${GOOD}/full.yaml`, { env: ENV });
    expect(config.bots.helper).toMatchObject({
      module: "bothost-helper-bot",
      api_key: "helper-fake-key-0001",
      api_key_file: path.join(goodDir, "secrets/helper.key"),
      server: { url: "sandbox", sandbox: { org: path.join(goodDir, "org.yaml"), port: 0 } },
    });
  });

  it("takes email and key from a zuliprc, and the server from the file before the zuliprc's site", async () => {
    const config = await loadConfig(`${GOOD}/full.yaml`, { env: ENV });
    expect(config.bots.reporter).toMatchObject({
      email: "reporter-bot@chat.example.org",
      api_key: "reporter-fake-key-0002",
      zuliprc: path.join(goodDir, "secrets/reporter.zuliprc"),
      server: { url: "https://chat.example.org" },
      handler_timeout: 2_500,
    });
  });

  it("uses the zuliprc's site when no server is configured", async () => {
    const config = await loadConfig(`${GOOD}/no-top-server.yaml`, { env: {} });
    expect(Object.hasOwn(config, "server")).toBe(false);
    expect(config.bots.reporter?.server).toEqual({ url: "https://other.example.org" });
  });

  it("resolves the file against cwd", async () => {
    const config = await loadConfig("minimal.yaml", { env: ENV, cwd: goodDir });
    expect(config.state.path).toBe(path.join(goodDir, ".bothost"));
  });

  it("keeps constructor and prototype keys of settings as plain data", async () => {
    const { config } = await loadConfigWithSource(`${GOOD}/odd-keys.yaml`, { env: ENV });
    const settings = config.bots.echo?.settings as Record<string, unknown>;
    expect(settings).toEqual({
      constructor: { name: "not a function" },
      prototype: { name: "polluted" },
      toString: 42,
      "1": "one",
    });
    expect(Object.hasOwn(settings, "constructor")).toBe(true);
    expect(Object.getPrototypeOf(settings)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).name).toBeUndefined();
  });
});

describe("ConfigSource", () => {
  it("locates values, keys, and missing keys at their nearest mapping entry", async () => {
    const { source } = await loadConfigWithSource(`${GOOD}/full.yaml`, { env: ENV });
    expect(source.dir).toBe(goodDir);
    expect(source.locate(["bots", "moderator", "settings", "threshold"])).toEqual({
      file: `${GOOD}/full.yaml`,
      line: 32,
      column: 18,
    });
    expect(source.locate(["bots", "moderator", "settings", "threshold"], "key")).toMatchObject({
      line: 32,
      column: 7,
    });
    // Not in the file: the nearest entry that is, by its key.
    expect(source.locate(["bots", "moderator", "settings", "nope", 3])).toMatchObject({
      line: 31,
      column: 5,
    });
    // Merged from an anchor: the <<: *limits line.
    expect(source.locate(["bots", "moderator", "concurrency"])).toMatchObject({ line: 27, column: 9 });
  });
});

describe("unreadable config files", () => {
  it("CONFIG_NOT_FOUND names the file and how to pick another", async () => {
    const err = await loadConfig("test/fixtures/config/no-such-file.yaml", { env: {} }).catch(
      (e: unknown) => e,
    );
    expect(isConfigError(err)).toBe(true);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe("CONFIG_NOT_FOUND");
    expect((err as ConfigError).message).toMatchInlineSnapshot(`
      "test/fixtures/config/no-such-file.yaml has 1 problem:
      test/fixtures/config/no-such-file.yaml: cannot be read: there is no such file; create it (see config.example.yaml), or name another file with --config FILE or BOTHOST_CONFIG"
    `);
  });

  it("refuses a folder", async () => {
    const err = (await loadConfig(GOOD, { env: {} }).catch((e: unknown) => e)) as ConfigError;
    expect(err.code).toBe("CONFIG_INVALID");
    expect(err.format()).toMatchInlineSnapshot(
      `"test/fixtures/config/good: cannot be read: it is a folder, not a file; give the path of a readable YAML file"`,
    );
  });
});

describe("config.example.yaml", () => {
  it("is a valid config once its keys are in the environment", async () => {
    const config = await loadConfig("config.example.yaml", {
      env: {
        MODERATION_BOT_API_KEY: "fake-key-0040",
        STANDUP_BOT_API_KEY: "fake-key-0042",
        ASSISTANT_BOT_API_KEY: "fake-key-0043",
        ECHO_BOT_API_KEY: "fake-key-0041",
      },
    });
    expect(Object.keys(config.bots)).toEqual(["moderator", "standup", "assistant", "echo"]);
    expect(config.bots.moderator).toMatchObject({
      concurrency: 8,
      handler_timeout: 30_000,
      narrow: [["channel", "general"]],
    });
    expect(config.bots.echo).toMatchObject({ concurrency: 2, handler_timeout: 60_000 });
  });

  it("names only bots that ship, whose settings their modules accept", async () => {
    const { config, source } = await loadConfigWithSource("config.example.yaml", {
      env: {
        MODERATION_BOT_API_KEY: "fake-key-0040",
        STANDUP_BOT_API_KEY: "fake-key-0042",
        ASSISTANT_BOT_API_KEY: "fake-key-0043",
        ECHO_BOT_API_KEY: "fake-key-0041",
      },
    });
    const loaded = await loadBots(config, source);
    expect(loaded.map((b) => b.name)).toEqual(["moderator", "standup", "assistant", "echo"]);
  });
});
