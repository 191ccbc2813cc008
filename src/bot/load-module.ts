/**
 * Loading a bot module: .ts through jiti (no build step), .js/.mjs/.cjs with Node's import().
 */
import { pathToFileURL } from "node:url";
import type { Jiti } from "jiti";
import { definitionProblems, unwrapDefinition } from "./check-definition.ts";
import type { BotDefinition } from "./define-bot.ts";
import { describeLoadError } from "./describe-load-error.ts";
import { ModuleError } from "./module-error.ts";
import { resolveModule } from "./resolve-module.ts";

/** Options of {@link loadBotModule}. */
export interface LoadBotModuleOptions {
  /** The config file's folder: relative module paths and package lookups start here. */
  configDir: string;
  /** The bot's name in the config, for messages. */
  botName?: string;
  /**
   * Evaluate the module and its local imports again, not from the cache (a reload after an edit).
   * Each fresh load keeps the previous evaluation in memory: meant for reloads, not for every event.
   */
  fresh?: boolean;
}

let jiti: Jiti | undefined;

// One loader per process. moduleCache on: like native ESM, a module used by two bots is evaluated
// once, so per-bot state belongs in setup(). fsCache off: no transpile cache written next to the
// user's files or in node_modules (read-only containers), and .ts bots are small.
// Loaded on first use: a daemon whose bots are all JavaScript never pays for jiti at start.
async function loader(): Promise<Jiti> {
  if (jiti === undefined) {
    const { createJiti } = await import("jiti");
    jiti = createJiti(import.meta.url, { interopDefault: true, moduleCache: true, fsCache: false });
  }
  return jiti;
}

let reloads = 0;

/**
 * TypeScript through jiti; JavaScript with Node's import(). Fresh: TypeScript through a loader
 * without a module cache (the module and the local files it imports are evaluated again);
 * JavaScript ESM by a new URL, which evaluates the entry file again (Node keeps the files it
 * imports cached).
 */
async function importModule(file: string, fresh: boolean): Promise<unknown> {
  const typescript = /\.[mc]?ts$/.test(file);
  if (typescript) return (await (fresh ? freshLoader() : loader())).import(file);
  const url = pathToFileURL(file).href;
  return import(fresh && !file.endsWith(".cjs") ? `${url}?reload=${++reloads}` : url);
}

/** A loader without a module cache: every file it imports is read and evaluated again. */
async function freshLoader(): Promise<Jiti> {
  const { createJiti } = await import("jiti");
  return createJiti(import.meta.url, { interopDefault: true, moduleCache: false, fsCache: false });
}

/** The file a bot's module specifier resolves to, without loading it. */
export function botModuleFile(specifier: string, options: LoadBotModuleOptions): Promise<string> {
  return resolveModule(specifier, options, loader);
}

/**
 * Finds, loads and checks a bot module, returning its definition.
 *
 * @throws {ModuleError} `MODULE_NOT_FOUND`, `MODULE_LOAD_FAILED` (syntax error with its line and
 *   column, a missing import, an exception at load) or `MODULE_INVALID` (no `setup`, bad `events`
 *   or `settings`), naming the bot, the module and what to fix.
 * @example
 * ```ts
 * const { config, source } = await loadConfigWithSource("bothost.yaml");
 * const definition = await loadBotModule(config.bots.echo!.module, { configDir: source.dir, botName: "echo" });
 * ```
 */
export async function loadBotModule(
  specifier: string,
  options: LoadBotModuleOptions,
): Promise<BotDefinition> {
  return (await loadBotModuleFile(specifier, options)).definition;
}

/** {@link loadBotModule}, also saying which file the specifier resolved to. */
export async function loadBotModuleFile(
  specifier: string,
  options: LoadBotModuleOptions,
): Promise<{ definition: BotDefinition; file: string }> {
  const { botName } = options;
  const file = await resolveModule(specifier, options, loader);
  const details = { botName, specifier, resolvedPath: file };
  let namespace: unknown;
  try {
    namespace = await importModule(file, options.fresh === true);
  } catch (err) {
    throw new ModuleError(
      "MODULE_LOAD_FAILED",
      details,
      await describeLoadError(err, file, specifier, await loader()),
      {
        cause: err,
      },
    );
  }
  const definition = unwrapDefinition(namespace);
  const problems = definitionProblems(definition);
  if (problems.length > 0) throw new ModuleError("MODULE_INVALID", details, problems.join("; "));
  const found = definition as BotDefinition & Record<string, unknown>;
  // A plain copy: jiti hands back a proxy, and the runtime should not see later changes.
  const copy: BotDefinition = Object.freeze({
    ...(found.events === undefined ? {} : { events: Object.freeze([...found.events]) }),
    ...(found.settings === undefined ? {} : { settings: found.settings }),
    setup: found.setup.bind(found),
  });
  return { definition: copy, file };
}
