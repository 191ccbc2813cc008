/**
 * Loading a bot module: resolving its specifier, importing it (.ts through jiti, no build step;
 * .js/.mjs/.cjs with Node's import()), and checking that it exports a usable bot definition.
 */
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Jiti, JitiOptions } from "jiti";
import { displayPath } from "../config/config-source.ts";
import { slimSourceMap } from "../errors/source-maps.ts";
import { whereThrown } from "../errors/where-thrown.ts";
import type { BotDefinition } from "./define-bot.ts";
import { definitionProblems, isObject } from "./definition-problems.ts";
import { ModuleError } from "./module-error.ts";
import { cachedTransform, transpileCacheDir } from "./transpile-cache.ts";
import { withSourceMap } from "./transpile-maps.ts";

/** Options of {@link loadBotModule}. */
export interface LoadBotModuleOptions {
  /** The config file's folder: relative module paths and package lookups start here. */
  configDir: string;
  /** What `configDir` is, as a path's error names it (default "the config file's folder"). */
  configDirIs?: string;
  /** The bot's name in the config, for messages. */
  botName?: string;
  /** Evaluate the module again, not from the cache (a reload; each keeps the old one in memory). */
  fresh?: boolean;
}

const MODULE_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"];
const PATH_LIKE = /^(?:\.{1,2}(?:[\\/]|$)|[\\/]|[A-Za-z]:[\\/]|file:)/;

let jiti: Jiti | undefined;
let reloads = 0;

type Transform = NonNullable<JitiOptions["transform"]>;
const requireHere = createRequire(import.meta.url);
// jiti's TypeScript transform is babel, about 1.5 MB of source that stays on the heap once loaded
// (several MB with its compiled code). It is loaded here on first use instead of by jiti, so that
// releaseTransform() can drop it once the bots are loaded; a reload loads it again. Undefined
// when jiti no longer ships it at this path: jiti then loads its own.
const babelFile = ((file) => (existsSync(file) ? file : undefined))(
  path.join(path.dirname(requireHere.resolve("jiti")), "../dist/babel.cjs"),
);
let babel: Transform | undefined;
// Babel installs its own Error.prepareStackTrace (and raises Error.stackTraceLimit to 50) on its
// first transform; that function would keep babel alive and format every later stack trace.
let installed:
  | { prepare: unknown; before: unknown; hadOwn: boolean; limit: number; limitBefore: number }
  | undefined;
// The transpile cache's folder (transpile-cache.ts), looked up (and made) when a loader is made.
let cacheDir: string | false | undefined;
/**
 * A module's JavaScript: from the transpile cache when an earlier process made it, else babel's;
 * a module of the user's with its source map kept apart (transpile-maps.ts).
 */
const transform: Transform = (options) =>
  withSourceMap(options, (given) =>
    cacheDir ? cachedTransform(cacheDir, given, () => transpile(given)) : transpile(given),
  );
const transpile: Transform = (options) => {
  // A require of its own: require() lists the module among its parent's children, which would
  // keep babel alive after its cache entry is deleted.
  babel ??= createRequire(import.meta.url)(babelFile!) as Transform;
  const hadOwn = Object.hasOwn(Error, "prepareStackTrace");
  const before = Error.prepareStackTrace;
  const limitBefore = Error.stackTraceLimit;
  const made = babel(options);
  const result = made.error === undefined ? { ...made, code: slimSourceMap(made.code) } : made;
  if (Error.prepareStackTrace !== before) {
    installed = {
      prepare: Error.prepareStackTrace,
      before,
      hadOwn,
      limit: Error.stackTraceLimit,
      limitBefore,
    };
  }
  return result;
};

/** Drop the TypeScript transform until a module needs it again (after the bots are loaded). */
export function releaseTransform(): void {
  if (babel === undefined || babelFile === undefined) return;
  babel = undefined;
  delete requireHere.cache[babelFile];
  // Undone only where nothing replaced them since (a bot module may install its own).
  if (installed !== undefined && Error.prepareStackTrace === installed.prepare) {
    if (installed.hadOwn) Error.prepareStackTrace = installed.before as typeof Error.prepareStackTrace;
    else delete (Error as { prepareStackTrace?: unknown }).prepareStackTrace;
    if (Error.stackTraceLimit === installed.limit) Error.stackTraceLimit = installed.limitBefore;
  }
  installed = undefined;
}

// One shared loader per process, made on first use (all-JavaScript daemons never load jiti).
// moduleCache on: like native ESM, a module used by two bots is evaluated once, so per-bot state
// belongs in setup(); a fresh loader has it off. jiti's own fsCache is off (it writes entries in
// place, next to the user's files or in node_modules): `transform` keeps them (transpile-cache.ts).
async function loader(fresh = false): Promise<Jiti> {
  if (jiti !== undefined && !fresh) return jiti;
  const { createJiti } = await import("jiti");
  cacheDir ??= transpileCacheDir(path.join(path.dirname(requireHere.resolve("jiti")), "../package.json"));
  const made = createJiti(import.meta.url, {
    interopDefault: true,
    moduleCache: !fresh,
    fsCache: false,
    ...(babelFile === undefined ? {} : { transform }),
  });
  if (!fresh) jiti = made;
  return made;
}

/**
 * Fresh: TypeScript through a loader without a module cache (the module and its local imports
 * are evaluated again); JavaScript ESM by a new URL, which evaluates only the entry file again.
 */
async function importModule(file: string, fresh: boolean): Promise<unknown> {
  if (/\.[mc]?ts$/.test(file)) return (await loader(fresh)).import(file);
  const url = pathToFileURL(file).href;
  return import(fresh && !file.endsWith(".cjs") ? `${url}?reload=${++reloads}` : url);
}

/**
 * `./bots/webhook-relay.ts`, as the guides name a shipped bot, in a project that installed
 * bothost (where it has no `bots/` of its own): the path of bothost's own file, when it has one
 * by that name.
 */
async function shippedBot(specifier: string, configDir: string): Promise<string | undefined> {
  const name = /^(?:\.\/)?bots\/([\w-]+\.[mc]?[jt]s)$/.exec(specifier.replaceAll("\\", "/"))?.[1];
  if (name === undefined) return undefined;
  const shipped = `./node_modules/bothost/bots/${name}`;
  const found = await stat(path.join(configDir, shipped)).then(
    (s) => s.isFile(),
    () => false,
  );
  return found ? shipped : undefined;
}

/**
 * The absolute file a specifier names, without loading it. Paths (`./x.ts`, `/abs/x.js`, `file:`
 * URLs) are resolved against `configDir`; other names are packages, resolved with Node's ESM rules
 * from `configDir`. A bare `bots/x.ts` that exists as a file is taken as that file.
 */
export async function botModuleFile(specifier: string, options: LoadBotModuleOptions): Promise<string> {
  const { configDir, botName, configDirIs = "the config file's folder" } = options;
  const fail = (code: "MODULE_NOT_FOUND" | "MODULE_INVALID", message: string, resolvedPath?: string) =>
    new ModuleError(code, { botName, specifier, resolvedPath }, message);
  const isPath = PATH_LIKE.test(specifier) || path.isAbsolute(specifier);
  const asFile = specifier.startsWith("file:")
    ? fileURLToPath(specifier)
    : path.resolve(configDir, specifier);
  const kind = await stat(asFile).then(
    (s) => (s.isDirectory() ? "folder" : "file"),
    () => "missing",
  );
  if (isPath || kind === "file") {
    // Only a relative path is read from the config's folder: an absolute one or a URL is as written.
    const relative = !specifier.startsWith("file:") && !path.isAbsolute(specifier);
    if (kind === "missing") {
      const shipped = relative ? await shippedBot(specifier, configDir) : undefined;
      throw fail(
        "MODULE_NOT_FOUND",
        `was not found (no file ${displayPath(asFile, process.cwd())}): check the path${relative ? `; it starts at ${configDirIs}` : ""}${shipped ? `; for the bot bothost ships by that name, write ${shipped}` : ""}`,
      );
    }
    if (kind === "folder") {
      throw fail(
        "MODULE_NOT_FOUND",
        `is a folder: name the module file inside it, e.g. ${specifier.replace(/[\\/]$/, "")}/index.ts`,
      );
    }
    if (!MODULE_EXTENSIONS.includes(path.extname(asFile))) {
      throw fail(
        "MODULE_INVALID",
        `is not a JavaScript or TypeScript file: bot modules end in ${MODULE_EXTENSIONS.join(", ")}`,
        asFile,
      );
    }
    return asFile;
  }
  const parentURL = pathToFileURL(path.join(configDir, "/")).href;
  const resolved = (await loader()).esmResolve(specifier, { parentURL, try: true });
  if (resolved === undefined) {
    const installed = await installedPackageFile(specifier, configDir);
    if (installed !== undefined) throw fail("MODULE_NOT_FOUND", installed);
    throw fail(
      "MODULE_NOT_FOUND",
      `is neither a file next to the config nor an installed package: for a file write ./${specifier}; for a package run npm install ${packageOf(specifier)} in ${configDir}`,
    );
  }
  if (!resolved.startsWith("file:")) {
    throw fail(
      "MODULE_INVALID",
      `resolves to ${resolved}, which is not a bot module: name a file or a bot package`,
    );
  }
  return fileURLToPath(resolved);
}

/** The package a bare specifier names: `pkg` of `pkg/sub/file.ts`, `@scope/pkg` of `@scope/pkg/file.ts`. */
function packageOf(specifier: string): string {
  return specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");
}

/**
 * Why `pkg/sub/file.ts` did not resolve when `pkg` is installed (a `node_modules/pkg` folder in
 * the config's folder or above): the package's `exports` do not list that subpath, so the file
 * is named by its path (`./node_modules/bothost/bots/moderation.ts`), or it is not in the package.
 * Undefined when the specifier names no subpath or the package is not installed.
 */
async function installedPackageFile(specifier: string, configDir: string): Promise<string | undefined> {
  const name = packageOf(specifier);
  if (name.length === specifier.length) return undefined;
  const subpath = specifier.slice(name.length + 1);
  for (let dir = configDir; ; dir = path.dirname(dir)) {
    const folder = path.join(dir, "node_modules", name);
    if (existsSync(path.join(folder, "package.json"))) {
      const file = path.join(folder, subpath);
      if (!existsSync(file))
        return `is not found: the package ${name} is installed (${folder}) but has no ${subpath}`;
      const relative = path.relative(configDir, file).split(path.sep).join("/");
      return `is not among what the package ${name} exports (its package.json "exports"): name the file by its path, module: ${relative.startsWith(".") ? relative : `./${relative}`}`;
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * Finds, loads and checks a bot module, returning its definition and the file it resolved to.
 *
 * @throws {ModuleError} `MODULE_NOT_FOUND`, `MODULE_LOAD_FAILED` (syntax error with its line and
 *   column, a missing import, an exception at load) or `MODULE_INVALID` (no `setup`, bad `events`
 *   or `settings`), naming the bot, the module and what to fix.
 */
export async function loadBotModule(
  specifier: string,
  options: LoadBotModuleOptions,
): Promise<{ definition: BotDefinition; file: string }> {
  const file = await botModuleFile(specifier, options);
  const details = { botName: options.botName, specifier, resolvedPath: file };
  let namespace: unknown;
  try {
    namespace = await importModule(file, options.fresh === true);
  } catch (err) {
    const reason = await describeLoadError(err, file, specifier, await loader(), options.configDir);
    // The cause is kept only for an exception of the module's own code: a parser's or resolver's
    // error says no more than the reason, and a test runner that prints the cause would show its
    // stack, or a column counted from 0 beside the reason's counted from 1.
    const cause = reason.startsWith(THREW) ? { cause: err } : undefined;
    throw new ModuleError("MODULE_LOAD_FAILED", details, reason, cause);
  }
  const definition = unwrapDefinition(namespace);
  const problems = noDefaultExport(namespace) ?? definitionProblems(definition);
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

/**
 * The definition, unwrapped from `default` (ESM `export default`, CommonJS `module.exports = …`,
 * or a CommonJS build of an ES module: `exports.default` under `default`).
 */
function unwrapDefinition(namespace: unknown): unknown {
  let current = namespace;
  for (let depth = 0; depth < 3; depth++) {
    if (!isObject(current) || typeof current.setup === "function") return current;
    if (current.default === undefined) return current;
    current = current.default;
  }
  return current;
}

/**
 * The problem of a module with no default export and no `setup` of its own (`export const bot =
 * defineBot(…)`), naming what it exports: "has no setup function" would send its author looking
 * in the wrong place.
 */
function noDefaultExport(namespace: unknown): [string] | undefined {
  if (!isObject(namespace)) return undefined;
  // Keys, not `namespace.default`: jiti's interop answers `default` with the exports themselves.
  const names = Object.keys(namespace);
  if (names.includes("default") || names.includes("setup")) return undefined;
  const bot = names.find((name) => isObject(namespace[name]) && typeof namespace[name].setup === "function");
  const fix = bot
    ? `export ${bot} as the default: export default ${bot}, or export default defineBot({ … })`
    : "write export default defineBot({ setup(bot, settings) { … } })";
  return [
    `has no default export (${names.length ? `it exports ${names.join(", ")}` : "it exports nothing"}): ${fix}`,
  ];
}

/** How {@link describeLoadError} begins the reason for an exception the module's code threw. */
const THREW = "threw while loading";

/**
 * One line saying why importing `file` (written `specifier` in the config) failed, and where:
 * never a stack trace. Places are named as the config names modules, whatever the working folder:
 * the module as `specifier`, a file it imports relative to the config's folder (`configDir`).
 */
export async function describeLoadError(
  err: unknown,
  file: string,
  specifier: string,
  jiti: Jiti,
  configDir: string,
): Promise<string> {
  const named = (where: string): string => {
    if (path.resolve(where) === path.resolve(file)) return specifier;
    const relative = path.relative(configDir, where);
    if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return where;
    return `./${relative.split(path.sep).join("/")}`;
  };
  const message = err instanceof Error ? err.message : String(err);
  const firstLine = (message.split("\n")[0] ?? "").trim();
  const syntax = (at: string, what: string) => `has a syntax error at ${specifier}:${at}: ${what}`;
  // jiti (TypeScript modules): "ParseError: Unexpected token \n /abs/file.ts:3:14", its column
  // counted from 0; said from 1, as tsc and editors count it.
  const parse = /^ParseError:\s*(.*?)\s*\n\s*(.+):(\d+):(\d+)\s*$/s.exec(message);
  if (parse) {
    const [at, what, where] = [
      `${parse[3]}:${Number(parse[4]) + 1}`,
      parse[1] || "Unexpected token",
      parse[2]!,
    ];
    // The error may be in a local file the module imports: name that file, not the module.
    if (!path.isAbsolute(where) || path.resolve(where) === path.resolve(file)) return syntax(at, what);
    return `imports a file with a syntax error, at ${named(where)}:${at}: ${what}`;
  }
  if (!/\.[mc]?ts$/.test(file)) {
    // Node's SyntaxError for an ES module has no position in its message (and other loaders, such
    // as test runners, word it differently); jiti's parser finds the position.
    const found = await locateSyntaxError(file, jiti);
    if (found) return syntax(found.at, err instanceof SyntaxError ? firstLine : found.message);
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") {
    const what = firstLine.replace(/ imported from .*$/, "");
    // A bare name ("zod", "@scope/pkg/sub") is a package: named with the folder npm installs into.
    const name = /^Cannot find (?:package|module) '((?:@[^/']+\/)?[^./'][^/']*)/.exec(what)?.[1];
    const where = projectOf(path.dirname(file));
    const install = name ? `npm install ${name}` : "npm install";
    return `could not be loaded: ${what}: install what it imports (${install} in ${where ?? "the bots' project"}), or fix the import`;
  }
  // Thrown by the module's own code as it ran (a JSON.parse of its own included): named where.
  const at = whereThrown(err, named);
  // E.g. "The requested module './x.js' does not provide an export named 'y'".
  if (err instanceof SyntaxError && at === undefined) return `could not be loaded: ${firstLine}`;
  // jiti's CommonJS output calls an import as "(0 , _bothost.defineBott)": say the name written.
  const said = firstLine.replace(/\(0 , _[\w$]+\.([\w$]+)\)/g, "$1");
  return `${THREW}${at ? ` at ${at}` : ""}: ${said || (err instanceof Error ? err.name : "an exception")}`;
}

async function locateSyntaxError(
  file: string,
  jiti: Jiti,
): Promise<{ at: string; message: string } | undefined> {
  try {
    const code = jiti.transform({ source: await readFile(file, "utf8"), filename: file, ts: false });
    const found = /__JITI_ERROR__\s*=\s*(\{.*\})/.exec(code);
    if (!found) return undefined;
    const { line, column, message } = JSON.parse(found[1]!) as {
      line?: number;
      column?: number;
      message?: string;
    };
    if (line === undefined) return undefined;
    return { at: `${line}:${(column ?? 0) + 1}`, message: message?.trim() || "Unexpected token" };
  } catch {
    return undefined;
  }
}

/** The nearest folder at or above `dir` with a package.json: where npm installs a module's imports. */
function projectOf(dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, "package.json"))) return at;
    if (path.dirname(at) === at) return undefined;
  }
}
