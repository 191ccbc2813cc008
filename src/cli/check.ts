/**
 * `bothost check`: everything `bothost run` would trip over at start, without starting. It
 * validates the config and every module (the same located errors as `run`), then asks each bot's
 * server who the bot is and what the server can do, and prints one table row per bot.
 */
import { loadBots } from "../bot/load-bots.ts";
import { resolveConfigPath } from "../config/config-path.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { loadConfigWithSource } from "../config/load-config.ts";
import type { BotConfig, Config } from "../config/schema.ts";
import { startSandbox } from "../sandbox/start-sandbox.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { commandArgs, configOption } from "./args.ts";
import { type BotCheck, checkBot } from "./check-bot.ts";
import { missingFeatures } from "./missing-features.ts";
import { reportStartupError } from "./report-error.ts";

export const checkHelp = `Usage: bothost check [--config FILE]

Validates the config and every bot module (as "bothost run" does at start), then asks each bot's
server who the bot is (GET /users/me) and what the server is (GET /server_settings), and prints a
table: bot, user id, email, is_bot, server version, feature level, and the bothost features the
server is too old for. Nothing changes on the server and the state directory is not opened, so
it is safe to run next to a running daemon. With url: sandbox, the embedded sandbox is started.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
  -h, --help          Show this text

Exit codes: 0 every bot is ready; 1 some bot is not (each is named, with the reason);
2 the config, a module or an option is invalid; 3 the server rejected every bot's credentials.
`;

/**
 * Run `bothost check` with its arguments; resolves with the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await runCheckCommand(["--config", "bothost.yaml"]);
 * ```
 */
export async function runCheckCommand(argv: string[]): Promise<number> {
  const args = commandArgs(argv, checkHelp, configOption);
  if (!args) return ExitCode.Ok;
  const { values } = args;
  let sandbox: Sandbox | undefined;
  try {
    const { path } = resolveConfigPath({ flag: values.config, env: process.env });
    const { config, source } = await loadConfigWithSource(path);
    await loadBots(config, source);
    if (Object.values(config.bots).some((b) => b.server.url === "sandbox")) {
      const s = config.server?.sandbox;
      sandbox = await startSandbox({ ...(s?.org ? { org: s.org } : {}), port: s?.port ?? 0 });
    }
    const checks = await checkEveryBot(config, sandbox);
    process.stdout.write(formatChecks(checks));
    const failing = checks.filter((c) => c.problem !== undefined);
    for (const c of failing) process.stderr.write(`bothost check: ${c.name}: ${c.problem}\n`);
    if (failing.length === 0) return ExitCode.Ok;
    return failing.length === checks.length && failing.every((c) => c.authFailed)
      ? ExitCode.AuthFailed
      : ExitCode.RuntimeFailure;
  } catch (err) {
    return reportStartupError(err);
  } finally {
    await sandbox?.stop();
  }
}

/** Check the bots `registration_concurrency` at a time, in config order. */
async function checkEveryBot(config: Config, sandbox: Sandbox | undefined): Promise<BotCheck[]> {
  const entries = Object.entries(config.bots);
  const results: BotCheck[] = new Array(entries.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < entries.length; i = next++) {
      const [name, bot] = entries[i]!;
      results[i] = await checkOne(name, bot, sandbox);
    }
  };
  const n = Math.min(config.registration_concurrency, entries.length);
  await Promise.all(Array.from({ length: n }, worker));
  return results;
}

function checkOne(name: string, bot: BotConfig, sandbox: Sandbox | undefined): Promise<BotCheck> {
  if (bot.server.url !== "sandbox") {
    return checkBot({ name, url: bot.server.url, email: bot.email, apiKey: bot.api_key });
  }
  const url = sandbox!.url;
  let apiKey = bot.api_key;
  if (apiKey === "") {
    // As `run` does: on the embedded sandbox a bot without a key signs in with its account's key.
    const account = sandbox!.control.users().find((u) => u.email === bot.email);
    if (!account) {
      return Promise.resolve({
        name,
        email: bot.email,
        url,
        authFailed: true,
        problem: `the embedded sandbox has no account ${bot.email}: add it to the org file (server.sandbox.org), or fix bots.${name}.email`,
      });
    }
    apiKey = account.api_key;
  }
  return checkBot({ name, url, email: bot.email, apiKey });
}

const HEADER = ["bot", "user id", "email", "is_bot", "server version", "feature level", "server lacks"];

/** The table, then one summary line. Cells the check could not learn show "-". */
export function formatChecks(checks: readonly BotCheck[]): string {
  const rows = checks.map((c) => [
    c.name,
    c.userId === undefined ? "-" : String(c.userId),
    c.email,
    c.isBot === undefined ? "-" : c.isBot ? "yes" : "no",
    c.version ?? "-",
    c.featureLevel === undefined ? "-" : String(c.featureLevel),
    c.featureLevel === undefined ? "-" : missingFeatures(c.featureLevel).join(", ") || "nothing",
  ]);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  const failing = checks.filter((c) => c.problem !== undefined).length;
  const people = checks.filter((c) => c.isBot === false).map((c) => c.name);
  const summary =
    failing === 0
      ? `All ${checks.length} bot${checks.length === 1 ? " is" : "s are"} ready.`
      : `${failing} of ${checks.length} bots cannot run; the reasons follow on stderr.`;
  const note =
    people.length > 0
      ? `\nNote: ${people.join(", ")} sign${people.length === 1 ? "s" : ""} in as a person, not a bot account; this works, but the server treats the messages as that person's.`
      : "";
  return `${[line(HEADER), ...rows.map(line)].join("\n")}\n\n${summary}${note}\n`;
}
