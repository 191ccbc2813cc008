/**
 * Runs a daemon in-process against a fresh sandbox: bots given as definitions, config written to
 * a temp file and loaded through the real loader, state in a temp directory.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { Daemon } from "../../src/daemon/daemon.ts";
import { createLogger } from "../../src/log/create-logger.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";

export interface HarnessBot {
  email: string;
  apiKey?: string;
  definition: BotDefinition<never, never>;
  extra?: string;
}

export interface Harness {
  daemon: Daemon;
  logs: Record<string, unknown>[];
  stateDir: string;
  stop(): Promise<void>;
}

export async function startHarness(
  sandbox: Sandbox,
  bots: Record<string, HarnessBot>,
  options: { stateDir?: string; global?: string } = {},
): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), "bothost-daemon-"));
  const stateDir = options.stateDir ?? join(dir, "state");
  const env: Record<string, string> = {};
  const lines = [
    `server:\n  url: ${sandbox.url}`,
    `state:\n  path: ${stateDir}`,
    options.global ?? "",
    "bots:",
  ];
  for (const [name, bot] of Object.entries(bots)) {
    const envName = `KEY_${name.toUpperCase().replace(/-/g, "_")}`;
    env[envName] = bot.apiKey ?? sandbox.control.apiKeyOf(bot.email);
    lines.push(`  ${name}:\n    module: ./unused.ts\n    email: ${bot.email}\n    api_key: \${${envName}}`);
    if (bot.extra) lines.push(bot.extra.replace(/^/gm, "    "));
  }
  const file = join(dir, "bothost.yaml");
  await writeFile(file, `${lines.join("\n")}\n`);
  const config = await loadConfig(file, { env });
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line));
      if (process.env.DEBUG_DAEMON) process.stderr.write(chunk);
      done();
    },
  });
  const log = createLogger({ destination, pretty: false, level: "debug" });
  const store = await FileStore.open(stateDir);
  const daemon = new Daemon({
    config,
    bots: Object.entries(bots).map(([name, b]) => ({ name, definition: b.definition, settings: undefined })),
    store,
    log,
    tuning: { backoff: { initialMs: 20, maxMs: 200 } },
  });
  await daemon.start();
  return {
    daemon,
    logs,
    stateDir,
    stop: async () => {
      await daemon.stop();
      if (!options.stateDir) await rm(dir, { recursive: true, force: true });
    },
  };
}
