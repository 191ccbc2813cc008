/**
 * A key of the config's top level written in a bot's entry (where it does nothing) is said to be
 * the daemon's, not listed as unknown among the bot's keys.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";

it("shutdown_timeout and log under a bot are named as the daemon's keys", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-config-"));
  try {
    const file = path.join(dir, "bothost.yaml");
    await writeFile(
      file,
      "server: { url: sandbox }\nbots:\n  echo:\n    module: ./echo.ts\n    email: echo-bot@sandbox.example\n    shutdown_timeout: 5s\n    log: { level: debug }\n    colour: blue\n",
    );
    const err = await loadConfig(file, { env: {}, cwd: dir }).catch((e: unknown) => e);
    if (!isConfigError(err)) throw new Error("the config loaded");
    expect(err.format()).toBe(
      [
        "bothost.yaml:6:5 bots.echo.shutdown_timeout: is not a bot's setting: it is set for the whole daemon, at the top level of the config",
        "bothost.yaml:7:5 bots.echo.log: is not a bot's setting: it is set for the whole daemon, at the top level of the config",
        "bothost.yaml:8:5 bots.echo.colour: is not a known key: remove it (known keys here: module, email, api_key, api_key_file, zuliprc, server, events, narrow, all_public_streams, own_messages, concurrency, handler_timeout, replay, outgoing_webhook, dry_run, long_messages, command_prefix, retries, rate_limit, webhooks, settings)",
      ].join("\n"),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
