/**
 * A daemon with its HTTP listener, in-process, against a sandbox: bots given as definitions (with
 * settings), config written as YAML and loaded through the real loader, logs captured as JSON.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { Daemon } from "../../src/daemon/daemon.ts";
import { createLogger } from "../../src/log/create-logger.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";

export interface TestBot {
  email: string;
  definition: BotDefinition<never, never>;
  settings?: unknown;
  /** More YAML for the bot's config entry (e.g. its outgoing_webhook). */
  extra?: string;
}

export interface RunningDaemon {
  daemon: Daemon;
  /** The HTTP listener's base URL. */
  url: string;
  /** Every log line, parsed. */
  logs: Record<string, unknown>[];
  /** Raw log text, to check that no secret was ever written. */
  logText(): string;
  stop(): Promise<void>;
}

/** A port that was free a moment ago (for a sandbox org that must know bothost's URL up front). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

function parseSettings(definition: BotDefinition<never, never>, raw: unknown): unknown {
  const schema = (definition as { settings?: { parse(v: unknown): unknown } }).settings;
  return schema ? schema.parse(raw ?? {}) : raw;
}

export async function startDaemon(
  sandbox: Sandbox,
  bots: Record<string, TestBot>,
  options: { port?: number; env?: Record<string, string>; http?: string } = {},
): Promise<RunningDaemon> {
  const dir = await mkdtemp(join(tmpdir(), "bothost-http-"));
  const env: Record<string, string> = { ...options.env };
  const lines = [
    `server:\n  url: ${sandbox.url}`,
    `state:\n  path: ${join(dir, "state")}`,
    `http:\n  listen: 127.0.0.1:${options.port ?? 0}${options.http ? `\n${options.http.replace(/^/gm, "  ")}` : ""}`,
    "bots:",
  ];
  for (const [name, bot] of Object.entries(bots)) {
    const envName = `KEY_${name.toUpperCase().replace(/-/g, "_")}`;
    env[envName] = sandbox.control.apiKeyOf(bot.email);
    lines.push(`  ${name}:\n    module: ./unused.ts\n    email: ${bot.email}\n    api_key: \${${envName}}`);
    if (bot.extra) lines.push(bot.extra.replace(/^/gm, "    "));
  }
  const file = join(dir, "bothost.yaml");
  await writeFile(file, `${lines.join("\n")}\n`);
  const config = await loadConfig(file, { env });
  const logs: Record<string, unknown>[] = [];
  let text = "";
  const destination = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line));
      if (process.env.DEBUG_DAEMON) process.stderr.write(chunk);
      done();
    },
  });
  const log = createLogger({ destination, pretty: false, level: "debug" });
  const store = await FileStore.open(join(dir, "state"));
  const daemon = new Daemon({
    config,
    bots: Object.entries(bots).map(([name, b]) => ({
      name,
      definition: b.definition,
      // Settings given here, else the YAML's (after ${ENV} interpolation) through the bot's schema.
      settings: b.settings ?? parseSettings(b.definition, config.bots[name]?.settings),
    })),
    store,
    log,
    tuning: { backoff: { initialMs: 20, maxMs: 200 } },
  });
  await daemon.start();
  return {
    daemon,
    url: daemon.http!.url!,
    logs,
    logText: () => text,
    stop: async () => {
      await daemon.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
