/**
 * Which config file to load: `--config FILE`, else `BOTHOST_CONFIG`, else `./bothost.yaml`.
 */
import path from "node:path";

/** The config file's absolute path and what chose it (for messages like "set by BOTHOST_CONFIG"). */
export interface ConfigPathChoice {
  readonly path: string;
  readonly from: "--config" | "BOTHOST_CONFIG" | "default";
}

/**
 * Picks the config file. Empty values count as not given.
 *
 * @example
 * ```ts
 * resolveConfigPath({ flag: undefined, env: { BOTHOST_CONFIG: "/etc/bothost.yaml" } });
 * // { path: "/etc/bothost.yaml", from: "BOTHOST_CONFIG" }
 * ```
 */
export function resolveConfigPath(options: {
  /** The value of `--config`, if given. */
  flag?: string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}): ConfigPathChoice {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  if (options.flag) return { path: path.resolve(cwd, options.flag), from: "--config" };
  const fromEnv = env.BOTHOST_CONFIG;
  if (fromEnv) return { path: path.resolve(cwd, fromEnv), from: "BOTHOST_CONFIG" };
  return { path: path.resolve(cwd, "bothost.yaml"), from: "default" };
}
