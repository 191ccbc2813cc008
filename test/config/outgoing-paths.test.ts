/**
 * An outgoing-webhook bot's path that bothost's own routes use, or another bot's, is a mistake in
 * the config file: refused where it is written, as `bothost check` and a reload read the file,
 * not only once the daemon's listener starts.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";

const written: string[] = [];
afterAll(async () => {
  for (const dir of written) await rm(dir, { recursive: true, force: true });
});

const bot = (name: string, hookPath: string) =>
  [
    `  ${name}:`,
    "    module: ./bots/echo.ts",
    `    email: ${name}-bot@chat.example.org`,
    "    api_key: fake-key-0001",
    "    outgoing_webhook:",
    `      path: ${hookPath}`,
    "      token: fake-token-0002",
  ].join("\n");

/** The problems of a config with an HTTP listener and these bots, one per line. */
async function problemsOf(bots: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-outgoing-"));
  written.push(dir);
  const file = path.join(dir, "bothost.yaml");
  const text = [
    "server:",
    "  url: https://chat.example.org",
    "http:",
    "  listen: 127.0.0.1:0",
    "bots:",
    ...bots,
  ];
  await writeFile(file, `${text.join("\n")}\n`);
  const err = await loadConfig(file, { env: {}, cwd: dir }).catch((e: unknown) => e);
  if (!isConfigError(err)) throw new Error(`expected a ConfigError, got ${String(err)}`);
  expect(err.code).toBe("CONFIG_INVALID");
  return err.format().replaceAll(file, "bothost.yaml");
}

it("a path of bothost's own routes is refused at the bot's path", async () => {
  expect(await problemsOf([bot("helper", "/healthz"), bot("other", "/admin/x")])).toBe(
    [
      'bothost.yaml:11:13 bots.helper.outgoing_webhook.path: is reserved (/healthz); choose another, like "/hooks/helper"',
      'bothost.yaml:18:13 bots.other.outgoing_webhook.path: is reserved (/admin/); choose another, like "/hooks/other"',
    ].join("\n"),
  );
});

it("a path two bots give is refused at the second", async () => {
  expect(await problemsOf([bot("helper", "/hooks/a"), bot("other", "/hooks/a")])).toBe(
    "bothost.yaml:18:13 bots.other.outgoing_webhook.path: is also the path of bot helper; give each bot its own",
  );
});
