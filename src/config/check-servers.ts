/**
 * Cross-field checks of server settings that the schema cannot express field by field.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { ConfigProblem } from "./config-error.ts";
import { type ConfigSource, displayPath } from "./config-source.ts";
import { isMapping } from "./resolve-credentials.ts";

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
  for (const [at, server] of servers) {
    if (!isMapping(server) || server.sandbox === undefined) continue;
    if (server.url !== "sandbox") {
      problems.push(
        source.problem(
          [...at, "sandbox"],
          'applies only when url is "sandbox": remove it, or set url: sandbox to run the embedded test server',
          "key",
        ),
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
        problems.push(
          source.problem(
            [...at, "sandbox", "org"],
            `names ${displayPath(file, cwd)}, which is not a file: check the path (relative paths start at the config file's folder)`,
          ),
        );
      }
    }
  }
  return problems;
}
