/**
 * Loading the config file: read → YAML with positions → interpolation → schema → files → freeze.
 */
import path from "node:path";
import { checkServers } from "./check-servers.ts";
import { ConfigError, type ConfigProblem, formatPath } from "./config-error.ts";
import { ConfigSource } from "./config-source.ts";
import { deepFreeze } from "./deep-freeze.ts";
import { parseConfigYaml } from "./parse-yaml.ts";
import { readConfigFile } from "./read-config-file.ts";
import { type Credentials, isMapping, resolveCredentials } from "./resolve-credentials.ts";
import { type Config, type ConfigFile, ConfigSchema } from "./schema.ts";
import { redact } from "./secrets.ts";
import { checkLeases } from "./state-schema.ts";
import { documentToValue } from "./yaml-to-value.ts";
import { issuesToProblems } from "./zod-problems.ts";

/** Options of {@link loadConfig}. */
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
 * @example
 * ```ts
 * const config = await loadConfig("bothost.yaml");
 * for (const [name, bot] of Object.entries(config.bots)) console.log(name, bot.server.url);
 * ```
 */
export async function loadConfig(file: string, options: LoadConfigOptions = {}): Promise<Config> {
  return (await loadConfigWithSource(file, options)).config;
}

/**
 * {@link loadConfig}, also returning where each value is in the file (to locate problems found
 * later, such as a bot's settings, and to resolve bot modules from the config's folder).
 *
 * @example
 * ```ts
 * const { config, source } = await loadConfigWithSource("bothost.yaml");
 * const def = await loadBotModule(config.bots.moderator!.module, { configDir: source.dir, botName: "moderator" });
 * ```
 */
export async function loadConfigWithSource(
  file: string,
  options: LoadConfigOptions = {},
): Promise<{ config: Config; source: ConfigSource }> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const bare = new ConfigSource(file, { cwd });
  const read = await readConfigFile(bare.path);
  if (!("text" in read)) {
    const { line, column, message } = read;
    throw new ConfigError(read.missing ? "CONFIG_NOT_FOUND" : "CONFIG_INVALID", [
      { file: bare.displayFile, line, column, path: "", message },
    ]);
  }
  const parsed = parseConfigYaml(read.text);
  const located = new ConfigSource(file, { cwd, lineCounter: parsed.lineCounter });
  const at = (p: { offset: number; path: readonly (string | number)[]; message: string }): ConfigProblem => ({
    ...located.locateOffset(p.offset),
    path: formatPath(p.path),
    message: p.message,
  });
  if (parsed.doc === undefined) throw new ConfigError("CONFIG_INVALID", parsed.problems.map(at));
  const converted = documentToValue(parsed.doc, env, (offset) => parsed.lineCounter.linePos(offset).line);
  const secrets = [...converted.secrets];
  const fail = (problems: ConfigProblem[]): never => {
    throw new ConfigError(
      "CONFIG_INVALID",
      problems.map((p) => ({ ...p, path: redact(p.path, secrets), message: redact(p.message, secrets) })),
    );
  };
  if (parsed.problems.length > 0) fail(parsed.problems.map(at));

  const source = new ConfigSource(file, { cwd, records: converted.records, lineCounter: parsed.lineCounter });
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
  const result = ConfigSchema.superRefine(checkLeases).safeParse(data);
  if (!result.success) {
    const schemaProblems = issuesToProblems(result.error.issues, data, ConfigSchema, source);
    problems.push(...schemaProblems.filter((p) => !reported.has(p.path)));
  }
  const { problems: credentialProblems, credentials } = await resolveCredentials(raw, source, cwd, secrets);
  problems.push(...credentialProblems, ...(await checkServers(raw, source, cwd)));
  if (problems.length > 0 || !result.success) return fail(problems);
  return { config: deepFreeze(assemble(result.data, credentials, source.dir)), source };
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
    bots[name] = {
      ...bot,
      server: own,
      email: found.email!,
      // "" only on the embedded sandbox, where the daemon takes the key from the sandbox.
      api_key: found.apiKey ?? "",
      ...(bot.api_key_file === undefined ? {} : { api_key_file: abs(bot.api_key_file) }),
      ...(bot.zuliprc === undefined ? {} : { zuliprc: abs(bot.zuliprc) }),
    };
  }
  const { server: top, ...rest } = file;
  return {
    ...rest,
    ...(top === undefined ? {} : { server: server(top) }),
    state: file.state.redis !== undefined ? file.state : { path: path.resolve(dir, file.state.path) },
    bots,
  };
}
