/**
 * The config as the admin commands (`status`, `reload`, `failed`) need it: where the daemon keeps
 * its state (which says where its admin socket is) and its HTTP listener, read from a file that
 * may be partly broken. Only `state:` and `http:` must be sound, and only the variables written in
 * them are looked up, so a mistake among the bots or a key variable that is not set in this shell
 * does not stop the command. {@link configProblemsOnDisk} says what a full load finds wrong.
 */
import path from "node:path";
import { isMap, isScalar, type Node, type Pair } from "yaml";
import type { z } from "zod";
import { adminSocketPath } from "./admin-socket-path.ts";
import { ConfigError, isConfigError } from "./config-error.ts";
import { type ConfigProblem, formatPath } from "./config-problem.ts";
import { ConfigSource } from "./config-source.ts";
import { type LoadConfigOptions, loadConfig, loadConfigWithSource, readConfigText } from "./load-config.ts";
import { isMapping } from "./resolve-credentials.ts";
import { ConfigSchema } from "./schema.ts";
import { redact } from "./secrets.ts";
import { type StateConfig, StateSchema } from "./state-schema.ts";
import { documentToValue, type OffsetProblem, parseConfigYaml } from "./yaml-to-value.ts";
import { issuesToProblems } from "./zod-problems.ts";

const HttpSchema = ConfigSchema.shape.http;

/** What the admin commands read from the config file. */
export interface AdminView {
  /** The config file, absolute. */
  readonly file: string;
  /** `state:`, its path absolute (default `./.bothost` beside the file). */
  readonly state: StateConfig;
  /** `http:` when it is there and valid; when invalid, undefined and its problems in `problems`. */
  readonly http: z.infer<typeof HttpSchema>;
  /** The daemon's admin socket (see admin-socket-path.ts). */
  readonly socket: string;
  /** What is wrong with `http:`. */
  readonly problems: readonly ConfigProblem[];
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Reads `state:` and `http:` from the config file, whatever else in it is wrong.
 *
 * @throws {ConfigError} the file cannot be read, is not a YAML mapping, or its `state:` is invalid.
 */
export async function readAdminView(file: string, options: LoadConfigOptions = {}): Promise<AdminView> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const text = await readConfigText(new ConfigSource(file, { cwd }));
  const { doc, lineCounter, problems: syntax } = parseConfigYaml(text);
  const ranges = new Map<string, readonly [number, number]>();
  const pairs = doc && isMap(doc.contents) ? (doc.contents.items as Pair[]) : [];
  for (const pair of pairs) {
    const key = pair.key as Node | null;
    if (!isScalar(key) || (key.value !== "state" && key.value !== "http")) continue;
    const start = key.range?.[0] ?? 0;
    ranges.set(String(key.value), [
      start,
      (pair.value as Node | null)?.range?.[2] ?? key.range?.[2] ?? start,
    ]);
  }
  // Only the variables written in state: and http: are read from the environment.
  const names = [...ranges.values()].flatMap(([a, b]) =>
    [...text.slice(a, b).matchAll(VARIABLE)].map((m) => m[1]!),
  );
  const own = Object.fromEntries(names.map((name) => [name, env[name]]));
  const converted = doc && documentToValue(doc, own, (o) => lineCounter.linePos(o).line);
  const source = new ConfigSource(file, { cwd, records: converted?.records, lineCounter });
  const secrets = converted?.secrets ?? [];
  const located = (p: OffsetProblem): ConfigProblem => ({
    ...source.locateOffset(p.offset),
    path: formatPath(p.path),
    message: redact(p.message, secrets),
  });
  const raw = converted?.value;
  if (!isMapping(raw)) throw new ConfigError("CONFIG_INVALID", syntax.map(located));
  const problemsOf = (key: string): ConfigProblem[] => {
    const [a, b] = ranges.get(key) ?? [-1, -1];
    const inside = (p: OffsetProblem) =>
      p.path[0] === key || (p.path.length === 0 && p.offset >= a && p.offset < b);
    return [...syntax, ...(converted?.problems ?? [])].filter(inside).map(located);
  };
  const checked = <S extends typeof StateSchema | typeof HttpSchema>(key: string, schema: S) => {
    const problems = problemsOf(key);
    if (problems.length > 0) return { problems };
    const result = schema.safeParse(raw[key]);
    if (result.success) return { value: result.data as z.infer<S>, problems };
    return { problems: issuesToProblems(result.error.issues, raw[key], schema, source, [key]) };
  };
  const state = checked("state", StateSchema);
  if (state.value === undefined) throw new ConfigError("CONFIG_INVALID", state.problems);
  const http = checked("http", HttpSchema);
  const where: StateConfig =
    state.value.redis !== undefined ? state.value : { path: path.resolve(source.dir, state.value.path) };
  return {
    file: source.path,
    state: where,
    http: http.value,
    socket: adminSocketPath(
      where.path !== undefined ? { path: where.path } : { redis: true, configFile: source.path },
    ),
    problems: http.problems,
  };
}

/** What a full load of the config file finds wrong, apart from variables unset in this shell. */
export interface ConfigProblemsOnDisk {
  /** Every problem, located (file:line:column and field path). Empty: the file loads. */
  problems: ConfigProblem[];
  /**
   * Variables the file uses that are not set here. The daemon reads its own environment (e.g. a
   * service's environment file), so they are not counted as problems of the file.
   */
  unsetVariables: string[];
}

const UNSET = /^environment variable ([A-Za-z_][A-Za-z0-9_]*) is not set\b/;

/** The variable a problem says is not set, if that is what it says. */
export function unsetVariableOf(problem: ConfigProblem): string | undefined {
  return UNSET.exec(problem.message)?.[1];
}

/** Loads the whole config as `bothost run` does and returns its problems instead of throwing them. */
export async function configProblemsOnDisk(
  file: string,
  options: LoadConfigOptions = {},
): Promise<ConfigProblemsOnDisk> {
  try {
    await loadConfig(file, options);
    return { problems: [], unsetVariables: [] };
  } catch (err) {
    if (!isConfigError(err)) throw err;
    const unset = err.problems.map(unsetVariableOf);
    return {
      problems: err.problems.filter((_, i) => unset[i] === undefined),
      unsetVariables: [...new Set(unset.filter((n): n is string => n !== undefined))],
    };
  }
}

/**
 * The config as `run` loads it; when its only problems are variables not set in this shell (API
 * keys, usually, which an offline command such as `commands` or `schedule preview` never uses),
 * loaded again with a placeholder `unset-NAME` for each, and their names in `placeholders`. If
 * that load fails too, the first error is thrown.
 *
 * @throws {ConfigError} the config does not load for another reason.
 */
export async function loadConfigWithPlaceholders(file: string, options: LoadConfigOptions = {}) {
  try {
    return { ...(await loadConfigWithSource(file, options)), placeholders: [] as string[] };
  } catch (err) {
    if (!isConfigError(err) || err.code !== "CONFIG_INVALID") throw err;
    const unset = err.problems.map(unsetVariableOf);
    if (unset.some((name) => name === undefined)) throw err;
    const placeholders = [...new Set(unset as string[])];
    const pathOf = new Map(err.problems.map((p, i) => [unset[i]!, p.path]));
    const load = (values: Record<string, string>) =>
      loadConfigWithSource(file, { ...options, env: { ...(options.env ?? process.env), ...values } });
    const words = Object.fromEntries(placeholders.map((n) => [n, `unset-${n}`]));
    try {
      return { ...(await load(words)), placeholders };
    } catch (again) {
      // A variable that stands for a number (a port: `listen: 127.0.0.1:${HTTP_PORT}`) refuses a
      // word: those whose field the word failed read 0 instead.
      const failing = new Set(isConfigError(again) ? again.problems.map((p) => p.path) : []);
      const numbers = placeholders.filter((n) => failing.has(pathOf.get(n)!));
      if (numbers.length === 0) throw err;
      try {
        return {
          ...(await load({ ...words, ...Object.fromEntries(numbers.map((n) => [n, "0"])) })),
          placeholders,
        };
      } catch {
        throw err;
      }
    }
  }
}
