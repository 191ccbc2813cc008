/**
 * Runs bots in a real Daemon against a sandbox (config through the real loader, state in a temp
 * directory, logs captured), with validated settings, and builds contexts the way the runtime
 * does (`createBaseContext(runtime.contextDeps(), …)`) so tests can call helpers directly.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { type BaseContext, createBaseContext } from "../../src/daemon/context.ts";
import { Daemon } from "../../src/daemon/daemon.ts";
import { createLogger } from "../../src/log/create-logger.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";

export interface TestBot {
  email: string;
  // biome-ignore lint/suspicious/noExplicitAny: any bot definition, whatever its settings schema
  definition: BotDefinition<any, any>;
  /** Raw settings, validated by the definition's schema like the loader does. */
  settings?: unknown;
  /** Extra YAML lines for the bot's config block, e.g. "long_messages: reject". */
  extra?: string;
}

export interface BotDaemon {
  daemon: Daemon;
  logs: Record<string, unknown>[];
  stateDir: string;
  /** A fresh context of bot `name` (the first bot by default), as a cron job would get. */
  context(name?: string): BaseContext<unknown>;
  /** Log lines whose msg contains `text`. */
  logged(text: string): Record<string, unknown>[];
  stop(): Promise<void>;
}

export async function startBots(
  sandbox: Sandbox,
  bots: Record<string, TestBot>,
  options: { stateDir?: string } = {},
): Promise<BotDaemon> {
  const dir = await mkdtemp(join(tmpdir(), "bothost-helpers-"));
  const stateDir = options.stateDir ?? join(dir, "state");
  const env: Record<string, string> = {};
  const lines = [`server:\n  url: ${sandbox.url}`, `state:\n  path: ${stateDir}`, "bots:"];
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
    bots: Object.entries(bots).map(([name, b]) => ({
      name,
      definition: b.definition as BotDefinition<never, never>,
      settings: b.definition.settings ? b.definition.settings.parse(b.settings ?? {}) : undefined,
    })),
    store,
    log,
    tuning: { backoff: { initialMs: 20, maxMs: 200 } },
  });
  const report = await daemon.start();
  if (report.started.length !== Object.keys(bots).length) {
    await daemon.stop();
    throw new Error(`bots failed to start: ${JSON.stringify(report)}`);
  }
  const first = Object.keys(bots)[0]!;
  return {
    daemon,
    logs,
    stateDir,
    context(name = first) {
      const runtime = daemon.bots.find((b) => b.name === name)!;
      return createBaseContext(runtime.contextDeps(), new AbortController().signal, { test: true });
    },
    logged: (text) => logs.filter((l) => typeof l.msg === "string" && l.msg.includes(text)),
    async stop() {
      await daemon.stop();
      if (!options.stateDir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Requests the sandbox received since `from` (an index into control.requests), as "METHOD /path". */
export function requestsSince(sandbox: Sandbox, from: number): string[] {
  return sandbox.control.requests.slice(from).map((r) => `${r.method} ${r.path}`);
}
