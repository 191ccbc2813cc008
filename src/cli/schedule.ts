import { loadBots } from "../bot/load-bots.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { resolveConfigPath } from "../config/load-config.ts";
import { formatRun, type PreviewEntry, previewEntries } from "../scheduler/preview.ts";
import {
  commandArgs,
  configOption,
  decimalValue,
  reportStartupError,
  unknownWord,
  usageError,
} from "./args.ts";
import { loadConfigOffline, setUpOffline } from "./offline-setup.ts";

export const scheduleHelp = `Usage: bothost schedule preview [--config FILE] [--count N] [--from TIME]

Prints the next runs of every bot's recurring announcements (bot.recurring) and cron jobs
(bot.cron), each in its own time zone and in UTC. Nothing is sent and no server is contacted:
the bots' setup functions run with a bot object that only records what they declare. A variable
the config uses but this shell does not set (an API key, usually) is read as a placeholder, with a
line on stderr saying so.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
  -n, --count N       Runs to show per schedule, 1-100 (default 5)
      --from TIME     Start after this ISO 8601 time instead of now
  -h, --help          Show this text
`;

const usage = (message: string) => usageError("schedule", message);

export async function runScheduleCommand(argv: string[]): Promise<number> {
  const args = commandArgs(
    "schedule",
    argv,
    scheduleHelp,
    { ...configOption, count: { type: "string", short: "n" }, from: { type: "string" } },
    true,
  );
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  if (positionals[0] !== "preview" || positionals.length > 1) {
    return usage(
      positionals.length === 0
        ? "say which subcommand: preview"
        : positionals[0] !== "preview"
          ? unknownWord("subcommand", positionals[0]!, ["preview"])
          : `preview takes no arguments (got ${positionals[1]})`,
    );
  }
  const count = values.count === undefined ? 5 : decimalValue(values.count);
  if (count === undefined || count < 1 || count > 100) {
    return usage(`--count must be a whole number from 1 to 100, got "${values.count}"`);
  }
  const from = values.from === undefined ? new Date() : new Date(values.from);
  if (Number.isNaN(from.getTime())) {
    return usage(`--from must be an ISO 8601 time like 2026-03-27T10:00:00Z, got "${values.from}"`);
  }
  try {
    const file = resolveConfigPath({ flag: values.config });
    const { config, source } = await loadConfigOffline(file, "schedule preview");
    const loaded = await loadBots(config, source);
    const lines = [`Next ${count === 1 ? "run" : `${count} runs`} after ${from.toISOString()}:`];
    for (const bot of loaded) {
      const handle = await setUpOffline(bot, "schedule preview");
      if (typeof handle === "number") return handle;
      lines.push("", ...describeBot(bot.name, previewEntries(handle, from, count)));
    }
    process.stdout.write(`${lines.join("\n")}\n`);
    return ExitCode.Ok;
  } catch (err) {
    return reportStartupError(err, "schedule");
  }
}

function describeBot(name: string, entries: PreviewEntry[]): string[] {
  if (entries.length === 0) return [`${name}: no recurring announcements or cron jobs`];
  const lines = [`${name}:`];
  for (const e of entries) {
    const what =
      e.kind === "announcement"
        ? `announcement "${e.id}" → ${e.target}`
        : `cron job "${e.id}" (runs in this process; missed runs: ${e.missed})`;
    lines.push(`  ${what}`, `    "${e.cron}" in ${e.timezone}`);
    if (e.runs.length === 0) lines.push("    (never runs again)");
    for (const run of e.runs) lines.push(`    ${formatRun(run, e.timezone)}`);
  }
  return lines;
}
