/**
 * Loading the config file: read → YAML with positions → interpolation → schema → files → freeze.
 */
import path from "node:path";
import { hasTypoOf } from "../errors/did-you-mean.ts";
import { type BotsDraft, ConfigError, type ConfigErrorCode } from "./config-error.ts";
import { type ConfigProblem, formatPath } from "./config-problem.ts";
import { ConfigSource } from "./config-source.ts";
import { checkOutgoingPaths } from "./outgoing-paths.ts";
import { readTextFile } from "./read-text-file.ts";
import { type Credentials, checkServers, isMapping, resolveCredentials } from "./resolve-credentials.ts";
import { type Config, type ConfigFile, ConfigSchema, checkListener } from "./schema.ts";
import { redact, redactProblem } from "./secrets.ts";
import { checkLeases } from "./state-schema.ts";
import { documentToValue, type OffsetProblem, parseConfigYaml } from "./yaml-to-value.ts";
import { issuesToProblems } from "./zod-problems.ts";

export interface LoadConfigOptions {
  /** Where `${VAR}` values come from. Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Relative config paths and the file names in messages start here. Default: `process.cwd()`. */
  cwd?: string;
}

/**
 * Loads, validates and freezes a config file, reporting every problem at once.
 *
 * @throws {ConfigError} `CONFIG_NOT_FOUND` when the file cannot be read, `CONFIG_INVALID` with
 *   every problem (file:line:column, path, how to fix) otherwise.
 */
export async function loadConfig(file: string, options: LoadConfigOptions = {}): Promise<Config> {
  return (await loadConfigWithSource(file, options)).config;
}

/**
 * {@link loadConfig}, also returning where each value is in the file (to locate problems found
 * later, such as a bot's settings, and to resolve bot modules from the config's folder).
 */
export async function loadConfigWithSource(
  file: string,
  options: LoadConfigOptions = {},
): Promise<{ config: Config; source: ConfigSource }> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const parsed = parseConfigYaml(await readConfigText(new ConfigSource(file, { cwd })));
  const { lineCounter } = parsed;
  const converted = parsed.doc && documentToValue(parsed.doc, env, (o) => lineCounter.linePos(o).line);
  const source = new ConfigSource(file, { cwd, records: converted?.records, lineCounter });
  const at = (p: OffsetProblem): ConfigProblem => ({
    ...source.locateOffset(p.offset),
    path: formatPath(p.path),
    message: p.message,
  });
  if (converted === undefined) throw new ConfigError("CONFIG_INVALID", parsed.problems.map(at));
  const secrets = [...converted.secrets];
  const fail = (problems: ConfigProblem[], draft?: BotsDraft): never => {
    throw new ConfigError(
      "CONFIG_INVALID",
      problems.map((p) => redactProblem(p, secrets)),
      draft === undefined ? undefined : { draft },
    );
  };
  if (parsed.problems.length > 0) fail(parsed.problems.map(at));

  const problems = converted.problems.map(at);
  const raw = converted.value;
  if (!isMapping(raw)) {
    if (raw !== undefined) {
      problems.push({
        ...source.locate([]),
        path: "",
        message: "the file must be a mapping of settings (server:, bots:, …), not a list or a single value",
      });
    }
    return fail(problems);
  }
  // A value whose interpolation failed would also fail the schema; one problem per field is enough.
  const reported = new Set(problems.map((p) => p.path));
  // Top-level keys starting with x- are a home for YAML anchors (<<: *defaults), as in Compose files.
  const data = Object.fromEntries(Object.entries(raw).filter(([key]) => !key.startsWith("x-")));
  const result = ConfigSchema.superRefine((config, ctx) => {
    checkLeases(config, ctx);
    checkListener(config, ctx);
    checkOutgoingPaths(config, ctx);
  }).safeParse(data);
  if (!result.success) {
    const schemaProblems = issuesToProblems(result.error.issues, data, ConfigSchema, source);
    problems.push(...schemaProblems.filter((p) => !reported.has(p.path)));
  }
  const { problems: credentialProblems, credentials } = await resolveCredentials(raw, source, cwd, secrets);
  problems.push(...credentialProblems, ...(await checkServers(raw, source, cwd)));
  if (problems.length > 0 || !result.success) {
    return fail(
      problems,
      botsDraft(data.bots, problems, source, (text) => redact(text, secrets)),
    );
  }
  return { config: deepFreeze(assemble(result.data, credentials, source.dir)), source };
}

/** Each bot entry whose `module` and `settings` have no problem of their own (see BotsDraft). */
function botsDraft(
  bots: unknown,
  problems: readonly ConfigProblem[],
  source: ConfigSource,
  hide: (text: string) => string,
): BotsDraft {
  const draft = new Map<string, { module: string; settings: unknown }>();
  if (!isMapping(bots)) return { source, bots: draft, redact: hide };
  for (const [name, entry] of Object.entries(bots)) {
    if (!isMapping(entry) || typeof entry.module !== "string") continue;
    const own = (field: string) => {
      const at = formatPath(["bots", name, field]);
      return problems.some(
        (p) => p.path === at || p.path.startsWith(`${at}.`) || p.path.startsWith(`${at}[`),
      );
    };
    // No settings but a likely typo of the key (`setings:`): that typo is the one problem said.
    const misspelt = entry.settings === undefined && hasTypoOf(entry, "settings");
    if (!own("module") && !own("settings") && !misspelt)
      draft.set(name, { module: entry.module, settings: entry.settings });
  }
  return { source, bots: draft, redact: hide };
}

// Fills each bot's server, email and key, and makes file paths absolute.
function assemble(file: ConfigFile, credentials: Map<string, Credentials>, dir: string): Config {
  const abs = (p: string | undefined) => (p === undefined ? undefined : path.resolve(dir, p));
  const server = <S extends ConfigFile["server"]>(s: S): S =>
    s?.sandbox?.org === undefined ? s : { ...s, sandbox: { ...s.sandbox, org: abs(s.sandbox.org) } };
  const bots: Record<string, Config["bots"][string]> = {};
  for (const [name, bot] of Object.entries(file.bots)) {
    const found = credentials.get(name) ?? {};
    const own = server(bot.server ?? file.server) ?? { url: found.site! };
    // Object.assign rather than a literal opening with `...bot`: V8 gives each object made that
    // way a hidden class of its own, which a daemon of a thousand bots holds a thousand times.
    bots[name] = Object.assign({}, bot, {
      server: own,
      email: found.email!,
      // "" only on the embedded sandbox, where the daemon takes the key from the sandbox.
      api_key: found.apiKey ?? "",
      ...(bot.api_key_file === undefined ? {} : { api_key_file: abs(bot.api_key_file) }),
      ...(bot.zuliprc === undefined ? {} : { zuliprc: abs(bot.zuliprc) }),
    });
  }
  const { server: top, ...rest } = file;
  return {
    ...rest,
    ...(top === undefined ? {} : { server: server(top) }),
    state: file.state.redis !== undefined ? file.state : { path: path.resolve(dir, file.state.path) },
    bots,
  };
}

/**
 * The config file's path: `--config FILE`, else `BOTHOST_CONFIG`, else `./bothost.yaml` (empty values
 * count as not given).
 */
export function resolveConfigPath(options: {
  flag?: string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}): string {
  const env = options.env ?? process.env;
  return path.resolve(options.cwd ?? process.cwd(), options.flag || env.BOTHOST_CONFIG || "bothost.yaml");
}

/** Freezes `value` and every object and array inside it; returns it. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** Config files larger than this are refused (a config is a few kilobytes). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** The config file as UTF-8 text; a ConfigError when it cannot be read or is not text. */
export async function readConfigText(source: ConfigSource): Promise<string> {
  const fail = (code: ConfigErrorCode, line: number, column: number, message: string) =>
    new ConfigError(code, [{ file: source.displayFile, line, column, path: "", message }]);
  const result = await readTextFile(source.path, MAX_CONFIG_BYTES);
  if ("error" in result) {
    const fix = result.missing
      ? "create it (see config.example.yaml), or name another file with --config FILE or BOTHOST_CONFIG"
      : result.error.startsWith("it is larger")
        ? `config files are limited to ${MAX_CONFIG_BYTES / 1024 / 1024} MiB`
        : "give the path of a readable YAML file";
    const code = result.missing ? "CONFIG_NOT_FOUND" : "CONFIG_INVALID";
    throw fail(code, 0, 0, `cannot be read: ${result.error}; ${fix}`);
  }
  // readTextFile decodes leniently: U+FFFD marks bytes that are not UTF-8.
  const text = result.text.replace(/^\uFEFF/, "");
  const nul = text.indexOf("\u0000");
  const at = nul !== -1 ? nul : text.indexOf("\uFFFD");
  if (at !== -1) {
    const before = text.slice(0, at);
    const what = nul !== -1 ? "binary data (a NUL byte)" : "bytes that are not UTF-8 text";
    const message = `contains ${what}: a config file is YAML text saved as UTF-8`;
    throw fail("CONFIG_INVALID", before.split("\n").length, at - before.lastIndexOf("\n"), message);
  }
  return text;
}
