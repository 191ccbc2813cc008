/**
 * Loading every configured bot's module and settings, reporting every problem at once.
 */
import { ConfigError, type ConfigProblem } from "../config/config-error.ts";
import type { ConfigSource } from "../config/config-source.ts";
import type { BotConfig, Config } from "../config/schema.ts";
import type { BotDefinition, EventType } from "./define-bot.ts";
import { botModuleFile, loadBotModuleFile } from "./load-module.ts";
import { isModuleError, type ModuleError } from "./module-error.ts";
import { moduleFingerprint } from "./module-fingerprint.ts";
import { validateBotSettings } from "./validate-settings.ts";

/** A bot ready for the runtime: its config, module, validated settings and event types. */
export interface LoadedBot {
  readonly name: string;
  readonly config: BotConfig;
  readonly definition: BotDefinition;
  readonly settings: unknown;
  /** The config's `events`, else the module's; `undefined` when neither says (the router decides). */
  readonly events: readonly EventType[] | undefined;
  /** A hash of the module's file and the local files it imports (a reload compares them). */
  readonly fingerprint: string;
}

export interface LoadBotsOptions {
  /** Load only these bots (a reload loads the bots it restarts). */
  only?: ReadonlySet<string>;
  /** Evaluate the modules again instead of taking them from the cache (after an edit). */
  fresh?: boolean;
}

/**
 * Loads each bot's module and validates its settings.
 *
 * @throws {ModuleError} when exactly one thing is wrong and it is a module (its own code).
 * @throws {ConfigError} `CONFIG_INVALID` listing every problem otherwise, a module problem at
 *   `bots.<name>.module` (the ModuleErrors are in `cause`, an AggregateError).
 * @example
 * ```ts
 * const { config, source } = await loadConfigWithSource("bothost.yaml");
 * const bots = await loadBots(config, source);
 * ```
 */
export async function loadBots(
  config: Config,
  source: ConfigSource,
  options: LoadBotsOptions = {},
): Promise<LoadedBot[]> {
  const loaded: LoadedBot[] = [];
  const problems: ConfigProblem[] = [];
  const moduleErrors: ModuleError[] = [];
  for (const [name, bot] of Object.entries(config.bots)) {
    if (options.only && !options.only.has(name)) continue;
    let definition: BotDefinition;
    let fingerprint: string;
    try {
      const found = await loadBotModuleFile(bot.module, {
        configDir: source.dir,
        botName: name,
        ...(options.fresh ? { fresh: true } : {}),
      });
      definition = found.definition;
      fingerprint = await moduleFingerprint(found.file);
    } catch (err) {
      if (!isModuleError(err)) throw err;
      moduleErrors.push(err);
      problems.push(source.problem(["bots", name, "module"], `${bot.module} ${err.reason} (${err.code})`));
      continue;
    }
    try {
      const settings = await validateBotSettings(name, definition, bot.settings, source);
      loaded.push({
        name,
        config: bot,
        definition,
        settings,
        events: bot.events ?? definition.events,
        fingerprint,
      });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  }
  if (moduleErrors.length === 1 && problems.length === 1) throw moduleErrors[0]!;
  if (problems.length > 0) {
    throw new ConfigError("CONFIG_INVALID", problems, {
      cause: moduleErrors.length > 0 ? new AggregateError(moduleErrors, "bot modules failed") : undefined,
    });
  }
  return loaded;
}

/**
 * Each bot's module fingerprint, without loading any module (what a reload compares). A module
 * that cannot be found gets a fingerprint of its own, so the reload loads it and reports why.
 */
export async function botFingerprints(config: Config, source: ConfigSource): Promise<Map<string, string>> {
  const prints = new Map<string, string>();
  for (const [name, bot] of Object.entries(config.bots)) {
    try {
      prints.set(
        name,
        await moduleFingerprint(await botModuleFile(bot.module, { configDir: source.dir, botName: name })),
      );
    } catch {
      prints.set(name, `unresolved ${bot.module}`);
    }
  }
  return prints;
}
