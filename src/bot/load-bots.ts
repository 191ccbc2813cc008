/**
 * Loading every configured bot's module and settings, reporting every problem at once.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../config/config-error.ts";
import type { ConfigProblem } from "../config/config-problem.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { loadConfigWithSource } from "../config/load-config.ts";
import type { BotConfig, Config } from "../config/schema.ts";
import type { BotDefinition, EventType } from "./define-bot.ts";
import { botModuleFile, loadBotModule, releaseTransform } from "./load-module.ts";
import { isModuleError, type ModuleError, moduleProblem } from "./module-error.ts";
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
  /** Where each of the config's `webhooks.<name>` keys is: `bothost.yaml:14:7`, by name. */
  readonly webhookPlaces: ReadonlyMap<string, string>;
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
 * @throws {ModuleError} when exactly one thing is wrong and it is a module's own code (it does
 *   not load, or exports no bot).
 * @throws {ConfigError} `CONFIG_INVALID` listing every problem otherwise (a module path that
 *   names no JS or TS file included), a module problem at
 *   `bots.<name>.module` (the ModuleErrors are in `cause`, an AggregateError).
 */
export async function loadBots(
  config: Config,
  source: ConfigSource,
  options: LoadBotsOptions = {},
): Promise<LoadedBot[]> {
  const loaded: LoadedBot[] = [];
  const problems: ConfigProblem[] = [];
  const moduleErrors: ModuleError[] = [];
  let inModuleCode = 0;
  const modules: ModuleCache = new Map();
  for (const [name, bot] of Object.entries(config.bots)) {
    if (options.only && !options.only.has(name)) continue;
    const one = await loadOne(name, bot.module, bot.settings, source, modules, options.fresh);
    if ("moduleError" in one) {
      moduleErrors.push(one.moduleError);
      if (!one.pathProblem) inModuleCode++;
      problems.push(moduleProblem(source, name, bot.module, one.moduleError));
    } else if ("problems" in one) {
      problems.push(...one.problems);
    } else {
      const { definition, settings, fingerprint } = one;
      loaded.push({
        name,
        config: bot,
        definition,
        settings,
        events: bot.events ?? definition.events,
        fingerprint,
        webhookPlaces: webhookPlaces(name, bot, source),
      });
    }
  }
  // Every module is evaluated: the TypeScript transform is not needed until the next load.
  releaseTransform();
  // A `module:` naming no file to load (not found, a folder, not JS or TS) is a wrong path in the
  // config: reported located there. Only a module's own code, alone at fault, is thrown as it is.
  if (inModuleCode === 1 && problems.length === 1) {
    throw moduleErrors[0]!;
  }
  if (problems.length > 0) {
    throw new ConfigError("CONFIG_INVALID", problems, {
      cause: moduleErrors.length > 0 ? new AggregateError(moduleErrors, "bot modules failed") : undefined,
    });
  }
  return loaded;
}

/** Where each of `bot`'s `webhooks.<name>` keys is in the config file, by name. */
function webhookPlaces(name: string, bot: BotConfig, source: ConfigSource): Map<string, string> {
  return new Map(
    Object.keys(bot.webhooks ?? {}).map((key) => {
      const { file, line, column } = source.locate(["bots", name, "webhooks", key], "key");
      return [key, `${file}:${line}:${column}`];
    }),
  );
}

/**
 * Modules by their path as the config writes it: bots that name the same module share its
 * definition (evaluated once either way) and fingerprint, as a daemon may run a thousand of one.
 */
type ModuleCache = Map<string, { definition: BotDefinition; fingerprint: string }>;

/** One bot's module and its settings checked by the module's schema, or what is wrong with them. */
async function loadOne(
  name: string,
  module: string,
  rawSettings: unknown,
  source: ConfigSource,
  modules: ModuleCache,
  fresh: boolean | undefined,
): Promise<
  | { definition: BotDefinition; fingerprint: string; settings: unknown }
  | { moduleError: ModuleError; pathProblem: boolean }
  | { problems: readonly ConfigProblem[] }
> {
  let found = modules.get(module);
  if (found === undefined) {
    try {
      const loaded = await loadBotModule(module, {
        configDir: source.dir,
        botName: name,
        ...(fresh ? { fresh } : {}),
      });
      found = { definition: loaded.definition, fingerprint: await moduleFingerprint(loaded.file) };
    } catch (err) {
      if (!isModuleError(err)) throw err;
      // The path names no file to load (resolved again only now, on the way out of a failure).
      const pathProblem = await botModuleFile(module, { configDir: source.dir, botName: name }).then(
        () => false,
        () => true,
      );
      return { moduleError: err, pathProblem };
    }
    modules.set(module, found);
  }
  try {
    return { ...found, settings: await validateBotSettings(name, found.definition, rawSettings, source) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { problems: err.problems };
  }
}

/**
 * The config file, as `loadConfigWithSource` reads it; when the file has problems, the error also
 * holds those of the bots' settings, so that one report has both (see {@link withSettingsProblems}).
 */
export async function loadConfigForBots(
  file: string,
  options: { fresh?: boolean } = {},
): ReturnType<typeof loadConfigWithSource> {
  try {
    return await loadConfigWithSource(file);
  } catch (err) {
    throw await withSettingsProblems(err, options);
  }
}

/**
 * `err` with the problems of the bots' settings added. A file that did not validate still names
 * each bot's module and settings (`ConfigError.draft`: those without a problem of their own);
 * each module is loaded, as `run` would load it, and its schema checks the settings. A module that
 * cannot be found or loaded, or is no bot, is reported at its `module:`.
 * `fresh` (a reload): modules are evaluated again, so edited schemas are the ones used.
 */
export async function withSettingsProblems(
  err: unknown,
  options: { fresh?: boolean } = {},
): Promise<unknown> {
  if (!(err instanceof ConfigError) || err.draft === undefined || err.draft.bots.size === 0) return err;
  const { source, bots } = err.draft;
  const more: ConfigProblem[] = [];
  const modules: ModuleCache = new Map();
  for (const [name, bot] of bots) {
    // Anything else going wrong is left to the next load: this report is the file's.
    const one = await loadOne(name, bot.module, bot.settings, source, modules, options.fresh).catch(
      () => undefined,
    );
    if (one === undefined) continue;
    if ("problems" in one) more.push(...one.problems);
    else if ("moduleError" in one) more.push(moduleProblem(source, name, bot.module, one.moduleError));
  }
  releaseTransform();
  if (more.length === 0) return err;
  const { redact } = err.draft;
  const hidden = more.map((p) => ({ ...p, path: redact(p.path), message: redact(p.message) }));
  return new ConfigError("CONFIG_INVALID", [...err.problems, ...hidden], { cause: err.cause });
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

/** Static imports, re-exports, dynamic import() and require() of a relative path. */
const LOCAL_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
const CANDIDATES = ["", ".ts", ".mts", ".cts", ".js", ".mjs", ".cjs", "/index.ts", "/index.js"];
/** A bound on the files followed, so a cycle or a huge tree cannot stall a reload. */
const MAX_FILES = 500;

/**
 * A hash of a bot module's file and of the local files it imports, followed through relative
 * specifiers (`./rules.ts`, `../shared/x.js`); a reload restarts a bot whose fingerprint changed.
 * Packages under node_modules are not followed (a dependency upgrade needs a daemon restart).
 */
export async function moduleFingerprint(file: string): Promise<string> {
  return (await moduleSources(file)).fingerprint;
}

/** {@link moduleFingerprint}, and the files it read: the module's, then those it imports. */
export async function moduleSources(file: string): Promise<{ fingerprint: string; files: string[] }> {
  const hash = createHash("sha256");
  const seen = new Set<string>();
  const pending = [file];
  while (pending.length > 0 && seen.size < MAX_FILES) {
    const next = pending.shift()!;
    if (seen.has(next)) continue;
    seen.add(next);
    const text = await readFile(next, "utf8").catch(() => undefined);
    hash.update(`${next}\u0000${text ?? "(unreadable)"}\u0000`);
    if (text === undefined) continue;
    for (const match of text.matchAll(LOCAL_IMPORT)) {
      const found = await firstExisting(path.resolve(path.dirname(next), match[1]!));
      if (found !== undefined && !seen.has(found)) pending.push(found);
    }
  }
  return { fingerprint: hash.digest("hex"), files: [...seen] };
}

async function firstExisting(base: string): Promise<string | undefined> {
  // A .js specifier may name a .ts source (TypeScript's rewriting convention).
  const stems = /\.[mc]?js$/.test(base) ? [base, base.replace(/js$/, "ts")] : [base];
  for (const candidate of stems.flatMap((stem) => CANDIDATES.map((suffix) => stem + suffix))) {
    const isFile = await stat(candidate).then(
      (s) => s.isFile(),
      () => false,
    );
    if (isFile) return candidate;
  }
  return undefined;
}
