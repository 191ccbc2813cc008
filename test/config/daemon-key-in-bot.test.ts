/**
 * A key of the config's top level written in a bot's entry (where it does nothing) is said to be
 * the daemon's, not listed as unknown among the bot's keys; a bot's key at the top level is said
 * to be each bot's.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";

/** The problems loading `yaml` (as bothost.yaml) finds, one per line. */
async function problemsOf(yaml: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-config-"));
  try {
    const file = path.join(dir, "bothost.yaml");
    await writeFile(file, yaml);
    const err = await loadConfig(file, { env: {}, cwd: dir }).catch((e: unknown) => e);
    if (!isConfigError(err)) throw new Error("the config loaded");
    return err.format();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const ECHO = "bots:\n  echo:\n    module: ./echo.ts\n    email: echo-bot@sandbox.example\n";

it("shutdown_timeout and log under a bot are named as the daemon's keys", async () => {
  expect(
    await problemsOf(
      `server: { url: sandbox }\n${ECHO}    shutdown_timeout: 5s\n    log: { level: debug }\n    colour: blue\n`,
    ),
  ).toBe(
    [
      "bothost.yaml:6:5 bots.echo.shutdown_timeout: is not a bot's setting: it is set for the whole daemon, at the top level of the config",
      "bothost.yaml:7:5 bots.echo.log: is not a bot's setting: it is set for the whole daemon, at the top level of the config",
      "bothost.yaml:8:5 bots.echo.colour: is not a known key: remove it (known keys here: module, email, api_key, api_key_file, zuliprc, server, events, narrow, all_public_streams, own_messages, concurrency, handler_timeout, replay, outgoing_webhook, dry_run, long_messages, command_prefix, retries, rate_limit, webhooks, settings)",
    ].join("\n"),
  );
});

it("handler_timeout and retries at the top level are named as each bot's keys", async () => {
  expect(
    await problemsOf(`server: { url: sandbox }\nhandler_timeout: 5s\nretries: { attempts: 1 }\n${ECHO}`),
  ).toBe(
    [
      "bothost.yaml:2:1 handler_timeout: is not a setting of the whole daemon: it is set for each bot, in its entry under bots",
      "bothost.yaml:3:1 retries: is not a setting of the whole daemon: it is set for each bot, in its entry under bots",
    ].join("\n"),
  );
});
