/**
 * Each bot's email, API key and fallback server, from the config, an api_key_file or a zuliprc.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { hasTypoOf } from "../errors/did-you-mean.ts";
import type { ConfigProblem } from "./config-problem.ts";
import { type ConfigSource, displayPath } from "./config-source.ts";
import { readTextFile } from "./read-text-file.ts";
import { BOT_NAME, ServerUrl } from "./schema-fields.ts";
import { apiSection } from "./zuliprc-section.ts";

export interface Credentials {
  email?: string;
  apiKey?: string;
  /** The zuliprc's `site`, used when neither the bot nor the file sets a server. */
  site?: string;
}

const KEY_SOURCES = ["api_key", "api_key_file", "zuliprc"] as const;
const MAX_KEY_FILE = 4096;
const MAX_ZULIPRC = 65_536;

/**
 * Reads every bot's credentials from the raw (not yet validated) data, so problems here are
 * reported together with schema problems. Secret values found are added to `secrets`.
 */
export async function resolveCredentials(
  raw: Record<string, unknown>,
  source: ConfigSource,
  cwd: string,
  secrets: string[],
): Promise<{ problems: ConfigProblem[]; credentials: Map<string, Credentials> }> {
  const problems: ConfigProblem[] = [];
  const add = (...args: Parameters<ConfigSource["problem"]>) => problems.push(source.problem(...args));
  const credentials = new Map<string, Credentials>();
  const bots = isMapping(raw.bots) ? raw.bots : {};
  for (const [name, bot] of Object.entries(bots)) {
    // A bad name or a non-mapping is reported by the schema; guessing credentials for it is noise.
    if (!isMapping(bot) || !BOT_NAME.test(name)) continue;
    const at = ["bots", name];
    const found: Credentials = {};
    // When a zuliprc was named but could not be read, what it would have supplied is unknown.
    let zuliprcUnread = false;
    const given = KEY_SOURCES.filter((key) => bot[key] !== undefined);
    // On the embedded sandbox the daemon takes each bot's key from the sandbox, by email.
    const onSandbox =
      (isMapping(bot.server) ? bot.server.url : isMapping(raw.server) ? raw.server.url : undefined) ===
      "sandbox";
    // A misspelt `server:` (reported as the typo) leaves the server unknown: maybe the sandbox,
    // which needs no key, so neither the key nor the server is said to be missing.
    const serverTypo =
      bot.server === undefined &&
      (hasTypoOf(bot, "server") || (raw.server === undefined && hasTypoOf(raw, "server")));
    if (given.length === 0 && (onSandbox || serverTypo)) {
      // Nothing to resolve.
    } else if (given.length === 0 && !KEY_SOURCES.some((key) => hasTypoOf(bot, key))) {
      const variable = `${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
      add(
        at,
        `has no API key: add api_key: \${${variable}}, or api_key_file: /run/secrets/${name}-api-key, or zuliprc: ./${name}.zuliprc`,
        "key",
      );
    } else if (given.length > 1) {
      add(
        [...at, given[1]!],
        `is set together with ${given[0]}: keep only one of api_key, api_key_file and zuliprc`,
        "key",
      );
    }
    if (typeof bot.api_key === "string") found.apiKey = bot.api_key;
    // The text of a file the bot names (api_key_file, zuliprc), or undefined once its problem is noted.
    const readNamed = async (key: "api_key_file" | "zuliprc", maxBytes: number) => {
      const file = path.resolve(source.dir, bot[key] as string);
      const result = await readTextFile(file, maxBytes);
      if (!("error" in result)) return result.text;
      const problem = `cannot be read (${displayPath(file, cwd)}): ${result.error}; ${RELATIVE}`;
      add([...at, key], problem);
      return undefined;
    };
    if (typeof bot.api_key_file === "string" && bot.api_key_file !== "") {
      const key = (await readNamed("api_key_file", MAX_KEY_FILE))?.trim();
      const where = [...at, "api_key_file"];
      if (key) secrets.push(key);
      if (key === "") add(where, "is an empty file: put the bot's API key in it");
      else if (key && /\s/.test(key)) {
        add(where, "holds more than an API key (spaces or several lines): keep only the key");
      } else if (key) found.apiKey = key;
    }
    if (typeof bot.zuliprc === "string" && bot.zuliprc !== "") {
      const text = await readNamed("zuliprc", MAX_ZULIPRC);
      // A file without its [api] line, or with a line that is no setting, supplies nothing: said
      // once, not as a missing email and server. Read as the client reads it.
      const { api, bad } = text === undefined ? {} : apiSection(text);
      const rc = {
        email: api?.get("email")?.value,
        key: api?.get("key")?.value,
        site: api?.get("site")?.value,
      };
      zuliprcUnread = text === undefined || bad !== undefined || api === undefined;
      if (rc.key) secrets.push(rc.key);
      if (text !== undefined && api === undefined) {
        add(
          [...at, "zuliprc"],
          "has no [api] section: its email=, key= and site= lines go under a line [api]; download the bot's zuliprc from the server again",
        );
      } else if (bad) {
        add(
          [...at, "zuliprc"],
          `line ${bad.line}: ${bad.problem}; download the bot's zuliprc from the server again`,
        );
      } else if (rc.key) found.apiKey = rc.key;
      else if (text !== undefined) {
        add(
          [...at, "zuliprc"],
          "has no key= line in its [api] section: download the bot's zuliprc from the server again",
        );
      }
      if (rc.email) found.email = rc.email;
      if (rc.site) found.site = rc.site;
      if (typeof bot.email === "string" && rc.email && rc.email.toLowerCase() !== bot.email.toLowerCase()) {
        add([...at, "email"], "differs from the email in the bot's zuliprc: remove one of them");
      }
    }
    if (typeof bot.email === "string") found.email = bot.email;
    else if (
      bot.email === undefined &&
      found.email === undefined &&
      !zuliprcUnread &&
      !hasTypoOf(bot, "email")
    ) {
      add(at, `has no email: add email: ${name}-bot@chat.example.org (the bot's email on the server)`, "key");
    }
    if (bot.server === undefined && raw.server === undefined && !zuliprcUnread && !serverTypo) {
      const site = found.site === undefined ? undefined : ServerUrl.safeParse(found.site);
      if (site?.success) found.site = site.data;
      else {
        add(
          at,
          site
            ? "has no server, and the site= in its zuliprc is not an http(s) URL: add server: { url: https://chat.example.org } to the bot or the top of the file"
            : "has no server: add server: { url: https://chat.example.org } at the top of the file, or to this bot",
          "key",
        );
      }
    }
    credentials.set(name, found);
  }
  return { problems, credentials };
}

const RELATIVE = "check the path (relative paths start at the config file's folder)";

export function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Problems with `sandbox:` blocks: only with `url: sandbox`, and their org file must exist. */
export async function checkServers(
  raw: Record<string, unknown>,
  source: ConfigSource,
  cwd: string,
): Promise<ConfigProblem[]> {
  const servers: [readonly string[], unknown][] = [[["server"], raw.server]];
  if (isMapping(raw.bots)) {
    for (const [name, bot] of Object.entries(raw.bots)) {
      if (isMapping(bot)) servers.push([["bots", name, "server"], bot.server]);
    }
  }
  const problems: ConfigProblem[] = [];
  const add = (...args: Parameters<ConfigSource["problem"]>) => problems.push(source.problem(...args));
  for (const [at, server] of servers) {
    if (!isMapping(server) || server.sandbox === undefined) continue;
    if (server.url !== "sandbox") {
      add(
        [...at, "sandbox"],
        'applies only when url is "sandbox": remove it, or set url: sandbox to run the embedded test server',
        "key",
      );
    }
    const org = isMapping(server.sandbox) ? server.sandbox.org : undefined;
    if (typeof org === "string" && org !== "") {
      const file = path.resolve(source.dir, org);
      const found = await stat(file).then(
        (s) => s.isFile(),
        () => false,
      );
      if (!found) {
        add([...at, "sandbox", "org"], `names ${displayPath(file, cwd)}, which is not a file: ${RELATIVE}`);
      }
    }
  }
  return problems;
}
