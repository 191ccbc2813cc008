/**
 * Every malformed or hostile fixture under test/fixtures/config/ and the exact problems it gives.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";

const FIXTURES = "test/fixtures/config";
// Fake values only; each must never appear in any message.
const SECRETS = [
  "echo-fake-key-from-env-0008",
  "literal-fake-key-0004",
  "literal-fake-key-0005",
  "fake-key-0007",
];
const ENV: Record<string, string> = {
  ECHO_BOT_API_KEY: "echo-fake-key-from-env-0008",
  BROKEN_URL: "not a url at all",
  NAME: "x",
};

const written: string[] = [];
afterAll(async () => {
  for (const dir of written) await rm(dir, { recursive: true, force: true });
});

/** Writes `text` as `name` in a fresh folder and loads it: the error it gives, if any. */
async function loadWritten(name: string, text: string): Promise<unknown> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-config-"));
  written.push(dir);
  await writeFile(path.join(dir, name), text);
  return loadConfig(path.join(dir, name), { env: ENV, cwd: dir }).catch((e: unknown) => e);
}

/** The formatted problems of a fixture, after checking the error's code and that no secret leaks. */
async function problems(name: string, env: Record<string, string> = ENV): Promise<string> {
  const err = await loadConfig(path.join(FIXTURES, name), { env }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isConfigError(err)) throw new Error(`expected a ConfigError for ${name}, got ${String(err)}`);
  expect(err.code).toBe("CONFIG_INVALID");
  const text = `${err.message}\n${err.format()}`;
  for (const secret of [
    ...SECRETS,
    "first-half-of-key",
    "zuliprc-fake-key-0003",
    "webhook-fake-token-0006",
  ]) {
    expect(text).not.toContain(secret);
  }
  expect(err.stack ?? "").not.toContain("echo-fake-key-from-env-0008");
  return err.format();
}

describe("malformed files", () => {
  it("empty.yaml", async () => {
    expect(await problems("empty.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/empty.yaml:1:1 the file is empty: write at least a server and a bots mapping (see config.example.yaml)"`,
    );
  });
  it("comments-only.yaml", async () => {
    expect(await problems("comments-only.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/comments-only.yaml:1:1 the file is empty: write at least a server and a bots mapping (see config.example.yaml)"`,
    );
  });
  it("syntax-unclosed-quote.yaml", async () => {
    expect(await problems("syntax-unclosed-quote.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/syntax-unclosed-quote.yaml:6:1 YAML syntax error: Missing closing "quote: add the missing character"`,
    );
  });
  it("syntax-tab-indent.yaml", async () => {
    expect(await problems("syntax-tab-indent.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/syntax-tab-indent.yaml:2:1 YAML syntax error: Tabs are not allowed as indentation: indent with spaces, not tabs"`,
    );
  });
  it("syntax-bad-indentation.yaml", async () => {
    expect(await problems("syntax-bad-indentation.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/syntax-bad-indentation.yaml:6:4 YAML syntax error: "email" is not lined up with the entries before it: line up entries of the same mapping or list at the same column, with spaces"`,
    );
  });
  it("duplicate-keys.yaml", async () => {
    expect(await problems("duplicate-keys.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/duplicate-keys.yaml:8:5 bots.echo.module: is set twice (also on line 5): keep one of them
      test/fixtures/config/duplicate-keys.yaml:9:1 server: is set twice (also on line 1): keep one of them"
    `);
  });
  it("multi-document.yaml", async () => {
    expect(await problems("multi-document.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/multi-document.yaml:3:1 a second YAML document starts here: a config file holds one document; remove this --- and what follows, or merge it into the first"`,
    );
  });
  it("root-is-list.yaml", async () => {
    expect(await problems("root-is-list.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/root-is-list.yaml:1:1 the file must be a mapping of settings (server:, bots:, …), not a list or a single value"`,
    );
  });
  it("root-is-scalar.yaml", async () => {
    expect(await problems("root-is-scalar.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/root-is-scalar.yaml:1:1 the file must be a mapping of settings (server:, bots:, …), not a list or a single value"`,
    );
  });
  it("keys-not-text.yaml", async () => {
    expect(await problems("keys-not-text.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/keys-not-text.yaml:3:3 has a key that is not plain text: write keys as words, like name: value
      test/fixtures/config/keys-not-text.yaml:5:1 has a key that is not plain text: write keys as words, like name: value
      test/fixtures/config/keys-not-text.yaml:6:1 has a key that is not plain text: write keys as words, like name: value"
    `);
  });
});

describe("hostile files", () => {
  it("binary-junk.yaml", async () => {
    expect(await problems("binary-junk.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/binary-junk.yaml:3:3 contains binary data (a NUL byte): a config file is YAML text saved as UTF-8"`,
    );
  });
  it("invalid-utf8.yaml", async () => {
    expect(await problems("invalid-utf8.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/invalid-utf8.yaml:4:6 contains bytes that are not UTF-8 text: a config file is YAML text saved as UTF-8"`,
    );
  });
  it("billion-laughs.yaml", async () => {
    expect(await problems("billion-laughs.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/billion-laughs.yaml:1:1 expands to more than 100000 values through aliases (a "billion laughs" file?): use fewer aliases"`,
    );
  });
  it("deep-nesting.yaml", async () => {
    expect(await problems("deep-nesting.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/deep-nesting.yaml:8:77 bots.echo.settings[0][0][0][0][0]…[0][0]: nests deeper than 64 levels: flatten it"`,
    );
  });
  it("alias-problems.yaml", async () => {
    expect(await problems("alias-problems.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/alias-problems.yaml:6:9 bots.echo: merges (<<) something that is not a mapping: merge an alias of a mapping, like <<: *defaults
      test/fixtures/config/alias-problems.yaml:11:16 bots.echo.settings.missing: uses alias *nowhere, but no &nowhere anchor comes before it: define the anchor first
      test/fixtures/config/alias-problems.yaml:12:23 bots.echo.settings.loop[1]: alias *loop refers to a value that contains it: aliases cannot be circular"
    `);
  });
  it("tag-js-function.yaml", async () => {
    expect(await problems("tag-js-function.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/tag-js-function.yaml:2:22 server.url: has the tag !!js/function, which bothost does not support: config files are plain data; remove the tag"`,
    );
  });
  it("tag-unknown-custom.yaml", async () => {
    expect(await problems("tag-unknown-custom.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/tag-unknown-custom.yaml:7:22 bots.echo.api_key: has the tag !secret, which bothost does not support: config files are plain data; remove the tag
      test/fixtures/config/tag-unknown-custom.yaml:9:38 bots.echo.settings.obj: has the tag !!python/object:os.system, which bothost does not support: config files are plain data; remove the tag
      test/fixtures/config/tag-unknown-custom.yaml:10:22 bots.echo.settings.blob: has the tag !!binary, which bothost does not support: config files are plain data; remove the tag
      test/fixtures/config/tag-unknown-custom.yaml:11:18 bots.echo.settings.set: has the tag !!set, which bothost does not support: config files are plain data; remove the tag"
    `);
  });
  it("proto-pollution.yaml", async () => {
    expect(await problems("proto-pollution.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/proto-pollution.yaml:1:1 __proto__: is a key bothost refuses ("__proto__" could change how every object behaves): rename it
      test/fixtures/config/proto-pollution.yaml:11:7 bots.echo.settings.__proto__: is a key bothost refuses ("__proto__" could change how every object behaves): rename it
      test/fixtures/config/proto-pollution.yaml:12:17 bots.echo.settings.nested.__proto__: is a key bothost refuses ("__proto__" could change how every object behaves): rename it"
    `);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect({}.constructor).toBe(Object);
  });
  it("secret-leak-attempts.yaml", async () => {
    expect(await problems("secret-leak-attempts.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/secret-leak-attempts.yaml:3:8 server.url: is not a URL: write the server's address, like https://chat.example.org, or "sandbox" for the embedded test server (the value comes from $ECHO_BOT_API_KEY)
      test/fixtures/config/secret-leak-attempts.yaml:5:10 log.level: must be one of trace, debug, info, warn, error, fatal, silent, not "[hidden]"
      test/fixtures/config/secret-leak-attempts.yaml:11:51 bots.echo.outgoing_webhook.token: must be text, not a list
      test/fixtures/config/secret-leak-attempts.yaml:15:14 bots.[hidden].api_key: contains spaces or line breaks: give the API key alone
      test/fixtures/config/secret-leak-attempts.yaml:19:19 bots.from-file.api_key_file: holds more than an API key (spaces or several lines): keep only the key"
    `);
  });

  it("a short secret that is also a word of a message leaves the message about its field whole, and is still hidden where echoed", async () => {
    const err = await loadWritten(
      "short.yaml",
      "server:\n  url: sandbox\nhttp:\n  listen: 127.0.0.1:8080\n  admin_token: short\n" +
        "log:\n  level: short\nbots:\n  echo:\n    module: ./x.ts\n    email: a@b.c\n    api_key: k-0123456789\n",
    );
    expect(isConfigError(err) && err.format()).toMatchInlineSnapshot(`
      "short.yaml:5:16 http.admin_token: is too short: use at least 16 random characters (e.g. openssl rand -hex 24)
      short.yaml:7:10 log.level: must be one of trace, debug, info, warn, error, fatal, silent, not "[hidden]""
    `);
  });

  it("a file over the size cap is refused before parsing", async () => {
    const err = await loadWritten("huge.yaml", `bots:\n${"  # padding\n".repeat(100_000)}`);
    expect(isConfigError(err) && err.code).toBe("CONFIG_INVALID");
    expect(isConfigError(err) && err.format()).toMatchInlineSnapshot(
      `"huge.yaml: cannot be read: it is larger than 1048576 bytes; config files are limited to 1 MiB"`,
    );
  });
});

describe("invalid values", () => {
  it("unknown-keys-typos.yaml", async () => {
    expect(await problems("unknown-keys-typos.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/unknown-keys-typos.yaml:1:1 serevr: is not a known key: did you mean "server"?
      test/fixtures/config/unknown-keys-typos.yaml:5:3 server.timeout: is not a known key: remove it (known keys here: url, sandbox)
      test/fixtures/config/unknown-keys-typos.yaml:6:1 logging: is not a known key: remove it (known keys here: server, state, leases, http, log, shutdown_timeout, registration_concurrency, longpoll_margin, bots)
      test/fixtures/config/unknown-keys-typos.yaml:9:5 bots.echo.modul: is not a known key: did you mean "module"?
      test/fixtures/config/unknown-keys-typos.yaml:10:5 bots.echo.emial: is not a known key: did you mean "email"?
      test/fixtures/config/unknown-keys-typos.yaml:11:5 bots.echo.api_kye: is not a known key: did you mean "api_key"?
      test/fixtures/config/unknown-keys-typos.yaml:12:5 bots.echo.own_message: is not a known key: did you mean "own_messages"?
      test/fixtures/config/unknown-keys-typos.yaml:13:15 bots.echo.replay.max_mesages: is not a known key: did you mean "max_messages"?
      test/fixtures/config/unknown-keys-typos.yaml:14:5 bots.echo.color: is not a known key: remove it (known keys here: module, email, api_key, api_key_file, zuliprc, server, events, narrow, all_public_streams, own_messages, concurrency, handler_timeout, replay, outgoing_webhook, dry_run, long_messages, command_prefix, retries, rate_limit, webhooks, settings)"
    `);
  });
  // The server unknown (maybe the sandbox, which needs no key): the typo alone is reported.
  it("a misspelt server: is reported once, as the typo, for the file and for a bot", async () => {
    const top = await loadWritten(
      "top.yaml",
      "sever:\n  url: sandbox\nbots:\n  hello:\n    module: ./x.ts\n    email: hello-bot@sandbox.example\n",
    );
    expect(isConfigError(top) && top.format()).toBe(
      'top.yaml:1:1 sever: is not a known key: did you mean "server"?',
    );
    const bot = await loadWritten(
      "bot.yaml",
      "bots:\n  hello:\n    module: ./x.ts\n    email: hello-bot@sandbox.example\n    servr: { url: sandbox }\n",
    );
    expect(isConfigError(bot) && bot.format()).toBe(
      'bot.yaml:5:5 bots.hello.servr: is not a known key: did you mean "server"?',
    );
  });
  it("missing-required.yaml", async () => {
    expect(await problems("missing-required.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/missing-required.yaml:1:1 server.url: is missing: add url: https://chat.example.org (or url: sandbox for the embedded test server)
      test/fixtures/config/missing-required.yaml:3:3 bots.echo.module: is missing: add module: ./bots/my-bot.ts (a file relative to this config, or a package name)
      test/fixtures/config/missing-required.yaml:3:3 bots.echo: has no API key: add api_key: \${ECHO_API_KEY}, or api_key_file: /run/secrets/echo-api-key, or zuliprc: ./echo.zuliprc
      test/fixtures/config/missing-required.yaml:3:3 bots.echo: has no email: add email: echo-bot@chat.example.org (the bot's email on the server)
      test/fixtures/config/missing-required.yaml:5:3 bots.helper: has no API key: add api_key: \${HELPER_API_KEY}, or api_key_file: /run/secrets/helper-api-key, or zuliprc: ./helper.zuliprc
      test/fixtures/config/missing-required.yaml:5:3 bots.helper: has no email: add email: helper-bot@chat.example.org (the bot's email on the server)"
    `);
  });
  it("no-bots.yaml", async () => {
    expect(await problems("no-bots.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/no-bots.yaml:3:7 bots: has no bots: add at least one, with its module, email and api_key (see config.example.yaml)"`,
    );
  });
  it("no-bots-key.yaml", async () => {
    expect(await problems("no-bots-key.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/no-bots-key.yaml:1:1 bots: is missing: add a bots: mapping with at least one bot (see config.example.yaml)"`,
    );
  });
  it("wrong-types.yaml", async () => {
    expect(await problems("wrong-types.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/wrong-types.yaml:2:8 server.url: must be text, not a whole number
      test/fixtures/config/wrong-types.yaml:3:8 state: must be a mapping (key: value entries), not text
      test/fixtures/config/wrong-types.yaml:5:10 log.level: must be one of trace, debug, info, warn, error, fatal, silent, not "verbose"
      test/fixtures/config/wrong-types.yaml:6:11 log.pretty: must be true, false or "auto"
      test/fixtures/config/wrong-types.yaml:7:27 registration_concurrency: must be a number, not text (remove the quotes)
      test/fixtures/config/wrong-types.yaml:10:13 bots.echo.module: must be text, not a list
      test/fixtures/config/wrong-types.yaml:11:12 bots.echo.email: is not an email address: write the bot's email, like moderation-bot@chat.example.org
      test/fixtures/config/wrong-types.yaml:13:13 bots.echo.events: must be a list, not text
      test/fixtures/config/wrong-types.yaml:14:25 bots.echo.all_public_streams: must be true or false, not text
      test/fixtures/config/wrong-types.yaml:15:19 bots.echo.own_messages: must be true or false, not a whole number
      test/fixtures/config/wrong-types.yaml:16:18 bots.echo.concurrency: must be a whole number, not a fractional number
      test/fixtures/config/wrong-types.yaml:17:31 bots.echo.outgoing_webhook.path: must be a URL path starting with /, like "/hooks/helper"
      test/fixtures/config/wrong-types.yaml:17:50 bots.echo.outgoing_webhook.token: is empty: set the token the server shows for the outgoing webhook bot
      test/fixtures/config/wrong-types.yaml:18:11 bots.nothing: is empty: give it a value (a mapping (key: value entries))
      test/fixtures/config/wrong-types.yaml:19:10 bots.listy: must be a mapping (key: value entries), not a list"
    `);
  });
  it("bot-names-bad.yaml", async () => {
    expect(await problems("bot-names-bad.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/bot-names-bad.yaml:4:3 bots.Moderator: "Moderator" is not a valid bot name: use up to 64 lower-case letters, digits, _ and -, starting with a letter or digit (like moderator or help-bot)
      test/fixtures/config/bot-names-bad.yaml:6:3 bots["help bot"]: "help bot" is not a valid bot name: use up to 64 lower-case letters, digits, _ and -, starting with a letter or digit (like moderator or help-bot)
      test/fixtures/config/bot-names-bad.yaml:8:5 bots["help bot"].concurency: is not a known key: did you mean "concurrency"?
      test/fixtures/config/bot-names-bad.yaml:9:3 bots._private: "_private" is not a valid bot name: use up to 64 lower-case letters, digits, _ and -, starting with a letter or digit (like moderator or help-bot)
      test/fixtures/config/bot-names-bad.yaml:11:3 bots.-dash: "-dash" is not a valid bot name: use up to 64 lower-case letters, digits, _ and -, starting with a letter or digit (like moderator or help-bot)
      test/fixtures/config/bot-names-bad.yaml:13:3 bots["ünïcode"]: "ünïcode" is not a valid bot name: use up to 64 lower-case letters, digits, _ and -, starting with a letter or digit (like moderator or help-bot)"
    `);
  });
  it("durations-bad.yaml", async () => {
    expect(await problems("durations-bad.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/durations-bad.yaml:3:19 shutdown_timeout: is not a duration: write a number with a unit, like "30s", "5m", "24h" or "1h30m" (units ms, s, m, h, d), or a number of milliseconds
      test/fixtures/config/durations-bad.yaml:9:22 bots.echo.handler_timeout: is too short: use at least 1 ms
      test/fixtures/config/durations-bad.yaml:11:16 bots.echo.replay.max_age: is not a duration: write a number with a unit, like "30s", "5m", "24h" or "1h30m" (units ms, s, m, h, d), or a number of milliseconds
      test/fixtures/config/durations-bad.yaml:12:21 bots.echo.replay.max_messages: must be at least 0 (0 turns catch-up off)
      test/fixtures/config/durations-bad.yaml:17:22 bots.other.handler_timeout: is negative: give a duration like "30s"
      test/fixtures/config/durations-bad.yaml:18:24 bots.other.replay.max_age: is not a duration: write a number with a unit, like "30s", "5m", "24h" or "1h30m" (units ms, s, m, h, d), or a number of milliseconds"
    `);
  });
  it("webhooks-bad.yaml", async () => {
    expect(await problems("webhooks-bad.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/webhooks-bad.yaml:9:37 bots.relay.webhooks.github.idempotency_window: is not a duration: write a number with a unit, like "30s", "5m", "24h" or "1h30m" (units ms, s, m, h, d), or a number of milliseconds
      test/fixtures/config/webhooks-bad.yaml:10:37 bots.relay.webhooks.stripe.idempotency_window: is too short: use at least 1h
      test/fixtures/config/webhooks-bad.yaml:11:35 bots.relay.webhooks.svix.idempotency_window: is too long: use at most 30d
      test/fixtures/config/webhooks-bad.yaml:12:7 bots.relay.webhooks.Deploys: "Deploys" is not a webhook name: use the name given to bot.webhook(), up to 64 lower-case letters, digits, _ and -
      test/fixtures/config/webhooks-bad.yaml:13:13 bots.relay.webhooks.ci.idempotency_windw: is not a known key: did you mean "idempotency_window"?
      test/fixtures/config/webhooks-bad.yaml:14:36 bots.relay.webhooks.pager.idempotency_window: is negative: give a duration like "30s"
      test/fixtures/config/webhooks-bad.yaml:15:34 bots.relay.webhooks.deploys.sender_timeout: is too short: use at least 1s
      test/fixtures/config/webhooks-bad.yaml:16:32 bots.relay.webhooks.slack.sender_timeout: is not a duration: write a number with a unit, like "30s", "5m", "24h" or "1h30m" (units ms, s, m, h, d), or a number of milliseconds
      test/fixtures/config/webhooks-bad.yaml:17:33 bots.relay.webhooks.gitlab.sender_timeout: is too long: use at most 1h"
    `);
  });
  it("outgoing-deadline-long.yaml", async () => {
    expect(await problems("outgoing-deadline-long.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/outgoing-deadline-long.yaml:14:23 bots.helper.outgoing_webhook.reply_deadline: is too long: use at most 10s"`,
    );
  });
  it("outgoing-without-listener.yaml", async () => {
    expect(await problems("outgoing-without-listener.yaml")).toMatchInlineSnapshot(
      `"test/fixtures/config/outgoing-without-listener.yaml:11:7 bots.helper.outgoing_webhook: needs the HTTP listener: add \`http: { listen: "127.0.0.1:8080" }\` to the config"`,
    );
  });
  it("urls-bad.yaml", async () => {
    expect(await problems("urls-bad.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/urls-bad.yaml:2:8 server.url: is not a URL: write the server's address, like https://chat.example.org, or "sandbox" for the embedded test server
      test/fixtures/config/urls-bad.yaml:8:20 bots.ftp.server.url: uses ftp://: use https:// (or http:// for a server on your own machine)
      test/fixtures/config/urls-bad.yaml:13:20 bots.creds.server.url: contains a user name or password: remove them; each bot signs in with its own email and API key
      test/fixtures/config/urls-bad.yaml:18:20 bots.api-suffix.server.url: ends with /api: give the server's base URL; bothost adds /api/v1 itself
      test/fixtures/config/urls-bad.yaml:23:20 bots.query.server.url: has a query (?…) or fragment (#…): remove it
      test/fixtures/config/urls-bad.yaml:28:20 bots.from-env.server.url: is not a URL: write the server's address, like https://chat.example.org, or "sandbox" for the embedded test server (the value comes from $BROKEN_URL)"
    `);
  });
  it("narrow-bad-shapes.yaml", async () => {
    expect(await problems("narrow-bad-shapes.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/narrow-bad-shapes.yaml:10:9 bots.echo.narrow[1]: must be a pair of text values [operator, operand], like [channel, general]
      test/fixtures/config/narrow-bad-shapes.yaml:11:9 bots.echo.narrow[2]: must be a pair of text values [operator, operand], like [channel, general]
      test/fixtures/config/narrow-bad-shapes.yaml:12:9 bots.echo.narrow[3]: must be a pair of text values [operator, operand], like [channel, general]
      test/fixtures/config/narrow-bad-shapes.yaml:13:9 bots.echo.narrow[4]: "chanel" is not an operator the server accepts in a queue narrow: did you mean "channel"? use one of channel, stream, topic, sender, is
      test/fixtures/config/narrow-bad-shapes.yaml:14:9 bots.echo.narrow[5]: [is, followed] is not accepted by the server in a queue narrow: narrow by channel or topic instead
      test/fixtures/config/narrow-bad-shapes.yaml:15:9 bots.echo.narrow[6]: must be a pair of text values [operator, operand], like [channel, general]
      test/fixtures/config/narrow-bad-shapes.yaml:16:9 bots.echo.narrow[7]: "search" is not an operator the server accepts in a queue narrow: use one of channel, stream, topic, sender, is
      test/fixtures/config/narrow-bad-shapes.yaml:21:13 bots.other.narrow: must be a list of [operator, operand] pairs, like [[channel, general], [topic, help]]
      test/fixtures/config/narrow-bad-shapes.yaml:26:13 bots.single.narrow: is one pair, not a list of pairs: write [[channel, general]]"
    `);
  });
  it("events-bad.yaml", async () => {
    expect(await problems("events-bad.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/events-bad.yaml:8:14 bots.echo.events[0]: "mesage" is not an event type: did you mean "message"?
      test/fixtures/config/events-bad.yaml:8:40 bots.echo.events[3]: "reactions" is not an event type: did you mean "reaction"?
      test/fixtures/config/events-bad.yaml:8:51 bots.echo.events[4]: "frobnicate" is not an event type: use one of heartbeat, restart, message, update_message, delete_message, reaction, typing, typing_edit_message, scheduled_messages, saved_snippets, realm_user, subscription, user_settings, alert_words, attachment, channel_folder, device, drafts, navigation_view, realm, realm_bot, realm_domains, realm_emoji, realm_user_settings_defaults, reminders, stream, update_message_flags, user_group
      test/fixtures/config/events-bad.yaml:13:13 bots.empty.events: is empty: list event types, or remove it to use the module's"
    `);
  });
  it("log-http-bad.yaml", async () => {
    expect(await problems("log-http-bad.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/log-http-bad.yaml:4:11 http.listen: must be text, not a whole number
      test/fixtures/config/log-http-bad.yaml:5:3 http.port: is not a known key: remove it (known keys here: listen, body_limit, request_timeout, admin_token)
      test/fixtures/config/log-http-bad.yaml:6:15 log.level: must be one of trace, debug, info, warn, error, fatal, silent, not "INFO": did you mean "info"?
      test/fixtures/config/log-http-bad.yaml:6:29 log.pretty: must be true, false or "auto"
      test/fixtures/config/log-http-bad.yaml:7:27 registration_concurrency: must be at least 1 (bots registering queues at once)
      test/fixtures/config/log-http-bad.yaml:13:18 bots.echo.concurrency: must be at most 1000 (conversations handled in parallel)
      test/fixtures/config/log-http-bad.yaml:14:5 bots.echo.outgoing_webhook.token: is missing: add token: \${MY_BOT_WEBHOOK_TOKEN} (the token the server shows for the bot)
      test/fixtures/config/log-http-bad.yaml:14:31 bots.echo.outgoing_webhook.path: must be a URL path starting with /, like "/hooks/helper""
    `);
  });
  it("sandbox-misuse.yaml", async () => {
    expect(await problems("sandbox-misuse.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/sandbox-misuse.yaml:3:3 server.sandbox: applies only when url is "sandbox": remove it, or set url: sandbox to run the embedded test server
      test/fixtures/config/sandbox-misuse.yaml:11:23 bots.echo.server.sandbox.org: names test/fixtures/config/no-such-org.yaml, which is not a file: check the path (relative paths start at the config file's folder)
      test/fixtures/config/sandbox-misuse.yaml:11:49 bots.echo.server.sandbox.port: must be between 0 and 65535 (0 picks a free port)"
    `);
  });
  it("interpolation-errors.yaml", async () => {
    expect(await problems("interpolation-errors.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/interpolation-errors.yaml:2:8 server.url: environment variable CHAT_URL is not set: set it before starting bothost, or write \${CHAT_URL:-default} to give a default
      test/fixtures/config/interpolation-errors.yaml:7:14 bots.echo.api_key: environment variable UNSET_ECHO_BOT_API_KEY is not set: set it before starting bothost, or write \${UNSET_ECHO_BOT_API_KEY:-default} to give a default
      test/fixtures/config/interpolation-errors.yaml:9:17 bots.echo.settings.unclosed: has a \${ without a closing }: close it, or write $\${ for a literal \${
      test/fixtures/config/interpolation-errors.yaml:10:17 bots.echo.settings.bad_name: has a \${…} that is not a variable name: names are letters, digits and _, not starting with a digit (write $\${ for a literal \${)
      test/fixtures/config/interpolation-errors.yaml:11:15 bots.echo.settings.spaces: has a \${…} that is not a variable name: names are letters, digits and _, not starting with a digit (write $\${ for a literal \${)
      test/fixtures/config/interpolation-errors.yaml:12:22 bots.echo.settings.required_form: uses an unsupported \${…} form: only \${NAME} and \${NAME:-default} are supported
      test/fixtures/config/interpolation-errors.yaml:13:15 bots.echo.settings.nested: nests a \${…} inside the default of OUTER: defaults are plain text"
    `);
  });
});

describe("credentials", () => {
  it("api-key-sources-conflict.yaml", async () => {
    expect(await problems("api-key-sources-conflict.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/api-key-sources-conflict.yaml:8:5 bots.both.api_key_file: is set together with api_key: keep only one of api_key, api_key_file and zuliprc
      test/fixtures/config/api-key-sources-conflict.yaml:8:19 bots.both.api_key_file: is an empty file: put the bot's API key in it
      test/fixtures/config/api-key-sources-conflict.yaml:11:12 bots.all-three.email: differs from the email in the bot's zuliprc: remove one of them
      test/fixtures/config/api-key-sources-conflict.yaml:13:5 bots.all-three.api_key_file: is set together with api_key: keep only one of api_key, api_key_file and zuliprc
      test/fixtures/config/api-key-sources-conflict.yaml:13:19 bots.all-three.api_key_file: holds more than an API key (spaces or several lines): keep only the key
      test/fixtures/config/api-key-sources-conflict.yaml:15:3 bots.none: has no API key: add api_key: \${NONE_API_KEY}, or api_key_file: /run/secrets/none-api-key, or zuliprc: ./none.zuliprc"
    `);
  });
  it("api-key-file-unreadable.yaml", async () => {
    expect(await problems("api-key-file-unreadable.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/api-key-file-unreadable.yaml:7:19 bots.missing.api_key_file: cannot be read (test/fixtures/config/secrets/does-not-exist.key): there is no such file; check the path (relative paths start at the config file's folder)
      test/fixtures/config/api-key-file-unreadable.yaml:11:19 bots.empty.api_key_file: is an empty file: put the bot's API key in it
      test/fixtures/config/api-key-file-unreadable.yaml:15:19 bots.two-lines.api_key_file: holds more than an API key (spaces or several lines): keep only the key
      test/fixtures/config/api-key-file-unreadable.yaml:19:19 bots.folder.api_key_file: cannot be read (test/fixtures/config/secrets): it is a folder, not a file; check the path (relative paths start at the config file's folder)"
    `);
  });
  it("zuliprc-problems.yaml", async () => {
    expect(await problems("zuliprc-problems.yaml")).toMatchInlineSnapshot(`
      "test/fixtures/config/zuliprc-problems.yaml:6:14 bots.lost.zuliprc: cannot be read (test/fixtures/config/nowhere/lost.zuliprc): there is no such file; check the path (relative paths start at the config file's folder)
      test/fixtures/config/zuliprc-problems.yaml:9:14 bots.keyless.zuliprc: has no key= line in its [api] section: download the bot's zuliprc from the server again
      test/fixtures/config/zuliprc-problems.yaml:12:12 bots.mismatch.email: differs from the email in the bot's zuliprc: remove one of them
      test/fixtures/config/zuliprc-problems.yaml:16:14 bots.headless.zuliprc: has no [api] section: its email=, key= and site= lines go under a line [api]; download the bot's zuliprc from the server again
      test/fixtures/config/zuliprc-problems.yaml:19:14 bots.unparsed.zuliprc: line 3: expected \`name = value\` or a \`[section]\` header; download the bot's zuliprc from the server again"
    `);
  });
});
