/**
 * A real Daemon in the test process against a sandbox: the config written as YAML and loaded
 * through the real loader, state in a temp directory, every log line captured as JSON: what
 * runBot (the testing kit) and the project's own test harnesses run bots on.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { BotDefinition } from "../bot/define-bot.ts";
import { validateBotSettings } from "../bot/validate-settings.ts";
import type { Coordinator } from "../cluster/coordinator.ts";
import { ConfigError, isConfigError } from "../config/config-error.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { loadConfigWithSource } from "../config/load-config.ts";
import type { Config } from "../config/schema.ts";
import { Daemon } from "../daemon/daemon.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { createLogger } from "../log/create-logger.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { FileStore } from "../state/file-store.ts";
import type { StateBackend } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import { type BotLines, blockAt, blockPlace, harnessConfigError, kitKeysGiven } from "./harness-config.ts";
import { LedgerWatch } from "./ledger-watch.ts";
import { newStateFolder, wipe } from "./state-folders.ts";

export interface InProcessBot {
  email: string;
  /** Default: the sandbox account's key. */
  apiKey?: string;
  // biome-ignore lint/suspicious/noExplicitAny: any bot definition, whatever its settings schema
  definition: BotDefinition<any, any>;
  /** Raw settings (else the YAML's), validated by the definition's schema as the loader does. */
  settings?: unknown;
  /**
   * Extra YAML lines for the bot's config block, e.g. "long_messages: reject", as the test wrote
   * them: a problem there is located in these lines (`config:1:12`).
   */
  extra?: string;
  /** More lines for the block, written by the harness itself (after `extra`). */
  generated?: string;
}

export interface InProcessOptions {
  /** Keep the state here (it survives `stop()`); default a temp folder removed at stop. */
  stateDir?: string;
  /** Extra top-level YAML, e.g. an `http:` block. */
  global?: string;
  /** The test's own top-level YAML (runBot's `daemon`): its problems are located in these lines. */
  daemon?: string;
  /** Environment for `${VAR}` in the YAML, on top of the bots' keys. */
  env?: Record<string, string>;
  /** The state store to run on (closed at stop); default a FileStore in `stateDir`. */
  store?: StateBackend;
  /** The daemon's clock (a test moves it to fire retries and checks); default the real one. */
  clock?: Clock;
  /** Where log lines are collected (to keep them across restarts); default a new array. */
  logs?: Record<string, unknown>[];
  /** Who decides which bots run here (a LeaseCoordinator on `store`); default every bot. */
  coordinator?: Coordinator;
  /** Given the daemon before it starts: a test may stop it while its bots start (as a SIGTERM does). */
  created?: (daemon: Daemon) => void;
}

export type InProcessDaemon = Awaited<ReturnType<typeof startInProcessDaemon>>;

/**
 * The bot's settings (given, else the YAML's), validated as `bothost run` validates them: a wrong
 * type or an unknown key (which a bare parse would drop) fails with each setting's path.
 */
async function settingsOf(name: string, bot: InProcessBot, fromYaml: unknown, source: ConfigSource) {
  const raw = bot.settings ?? fromYaml;
  try {
    return await validateBotSettings(name, bot.definition, raw, source);
  } catch (err) {
    if (!isConfigError(err)) throw err;
    const lines = err.problems.map((p) => `  ${p.path}: ${p.message}`);
    // The loader's code kept (CONFIG_INVALID), as for a refused config entry.
    throw new BothostError(
      err.code,
      `${name}'s settings would be refused by bothost run:\n${lines.join("\n")}`,
    );
  }
}

/**
 * Where each of bot `name`'s `webhooks.<name>` keys is, in the test's terms: in its config lines
 * (`config:3:3`), as `bothost check` names a config file's line; one the harness wrote has none,
 * its error naming the field's path alone.
 */
function webhookPlaces(
  name: string,
  { config, source }: { config: Config; source: ConfigSource },
  blocks: readonly BotLines[],
): Map<string, string> {
  const places = new Map<string, string>();
  for (const key of Object.keys(config.bots[name]?.webhooks ?? {})) {
    const { line, column } = source.locate(["bots", name, "webhooks", key], "key");
    const block = blockAt(blocks, line);
    if (block?.name === name) places.set(key, blockPlace(block, line, column));
  }
  return places;
}

export async function startInProcessDaemon(
  sandbox: Sandbox,
  bots: Record<string, InProcessBot>,
  options: InProcessOptions = {},
) {
  const dir = await newStateFolder("daemon");
  const stateDir = options.stateDir ?? join(dir, "state");
  const env: Record<string, string> = { ...options.env };
  const lines = [
    `server:\n  url: ${sandbox.url}`,
    `state:\n  path: ${stateDir}`,
    ...(options.global ? [options.global] : []),
  ];
  const blocks: BotLines[] = [];
  const lineCount = () => lines.join("\n").split("\n").length;
  if (options.daemon) {
    const count = options.daemon.split("\n").length;
    blocks.push({ name: "", option: "daemon", first: lineCount() + 1, count, indent: 0 });
    lines.push(options.daemon);
  }
  lines.push("bots:");
  for (const [name, bot] of Object.entries(bots)) {
    const envName = `KEY_${name.toUpperCase().replace(/-/g, "_")}`;
    env[envName] = bot.apiKey ?? sandbox.control.apiKeyOf(bot.email);
    lines.push(`  ${name}:\n    module: ./unused.ts\n    email: ${bot.email}\n    api_key: \${${envName}}`);
    if (bot.extra) {
      blocks.push({
        name,
        option: "config",
        first: lineCount() + 1,
        count: bot.extra.split("\n").length,
        indent: 4,
      });
      lines.push(bot.extra.replace(/^/gm, "    "));
    }
    if (bot.generated) lines.push(bot.generated.replace(/^/gm, "    "));
  }
  const file = join(dir, "bothost.yaml");
  await writeFile(file, `${lines.join("\n")}\n`);
  const settings = new Map<string, unknown>();
  let loaded: Awaited<ReturnType<typeof loadConfigWithSource>>;
  try {
    loaded = await loadConfigWithSource(file, { env });
    const kitKeys = kitKeysGiven(loaded.source, blocks);
    if (kitKeys.length > 0) throw new ConfigError("CONFIG_INVALID", kitKeys);
    for (const [name, b] of Object.entries(bots))
      settings.set(name, await settingsOf(name, b, loaded.config.bots[name]?.settings, loaded.source));
  } catch (err) {
    await wipe(dir);
    throw isConfigError(err) ? harnessConfigError(err, blocks) : err;
  }
  const { config } = loaded;
  const logs: Record<string, unknown>[] = options.logs ?? [];
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
  // The store as the daemon sees it, observed so a test can wait until a message is handled.
  // State expiry (`ttlMs`) follows the daemon's clock, so a test that moves it expires keys too.
  const clock = options.clock;
  const ledger = new LedgerWatch(
    options.store ?? (await FileStore.open(stateDir, clock ? { now: () => clock.now() } : {})),
  );
  for (const name of Object.keys(bots)) await ledger.load(name);
  const daemon = new Daemon({
    config,
    bots: Object.entries(bots).map(([name, b]) => ({
      name,
      definition: b.definition as BotDefinition<never, never>,
      settings: settings.get(name),
      webhookPlaces: webhookPlaces(name, loaded, blocks),
    })),
    store: ledger.store,
    log,
    tuning: { backoff: { initialMs: 20, maxMs: 200 } },
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.coordinator ? { coordinator: options.coordinator } : {}),
  });
  options.created?.(daemon);
  const report = await daemon.start();
  return {
    daemon,
    config,
    report,
    stateDir,
    /** Each bot's delivery ledger as written: `ledger.until(bot, messageId, …)`. */
    ledger,
    logs,
    /** Raw log text, to check that no secret was ever written. */
    logText: () => text,
    /** Log lines whose msg contains `part`. */
    logged: (part: string) => logs.filter((l) => typeof l.msg === "string" && l.msg.includes(part)),
    /** `deadlineMs`: how long handlers still running may finish (0: cut off, as in a crash). */
    stop: async (stopOptions: { deadlineMs?: number; keepState?: boolean } = {}) => {
      await daemon.stop(stopOptions.deadlineMs === undefined ? {} : { deadlineMs: stopOptions.deadlineMs });
      // The state is in `dir` only when no `stateDir` was given; else the folder holds the config alone.
      if (stopOptions.keepState && !options.stateDir) await rm(file, { force: true });
      else await wipe(dir);
    },
  };
}
