import type { CommandDescription } from "../bot/commands/describe-commands.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { suggest } from "../errors/did-you-mean.ts";
import { commandArgs, configOption, reportStartupError, usageError } from "./args.ts";

export const commandsHelp = `Usage: bothost commands [BOT] [--config FILE] [--json]

Prints every bot's commands (bot.command): name, arguments, options, description, examples and
who may run them; with BOT, that bot's only. Nothing is sent and no server is contacted: the
bots' setup functions run with a bot object that only records what they declare. A variable the
config uses but this shell does not set (an API key, usually) is read as a placeholder, with a
line on stderr saying so.

--json prints { bots: [{ bot, prefix, commands: [{ name, description, aliases, usage,
arguments, options, examples, permission, subcommands }] }] }, the shape of a bot-command
registry a server's compose box could offer as typeahead.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
      --json          Print JSON
  -h, --help          Show this text
`;

/** One bot's commands as `bothost commands --json` prints them. */
export interface BotCommands {
  bot: string;
  /** The config's `command_prefix`, or `null`: commands only in direct messages and mentions. */
  prefix: string | null;
  commands: CommandDescription[];
}

export async function runCommandsCommand(argv: string[]): Promise<number> {
  const args = commandArgs(
    "commands",
    argv,
    commandsHelp,
    { ...configOption, json: { type: "boolean" } },
    true,
  );
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  if (positionals.length > 1)
    return usageError("commands", `give at most one bot, got ${positionals.join(", ")}`);
  try {
    // Loaded once the arguments are known good: --help and a usage error need none of it.
    const [{ loadBots }, { resolveConfigPath }, { loadConfigOffline, setUpOffline }] = await Promise.all([
      import("../bot/load-bots.ts"),
      import("../config/load-config.ts"),
      import("./offline-setup.ts"),
    ]);
    const { config, source } = await loadConfigOffline(
      resolveConfigPath({ flag: values.config }),
      "commands",
    );
    const wanted = positionals[0];
    const names = Object.keys(config.bots);
    if (wanted !== undefined && !names.includes(wanted)) {
      const hint = suggest(wanted, names);
      return usageError(
        "commands",
        `no bot "${wanted}" in the config${hint ? ` (did you mean "${hint}"?)` : ""}`,
      );
    }
    const loaded = await loadBots(config, source, wanted ? { only: new Set([wanted]) } : {});
    const bots: BotCommands[] = [];
    for (const bot of loaded) {
      const handle = await setUpOffline(bot, "commands");
      if (typeof handle === "number") return handle;
      bots.push({
        bot: bot.name,
        prefix: bot.config.command_prefix ?? null,
        commands: handle.commands?.describe() ?? [],
      });
    }
    process.stdout.write(values.json ? `${JSON.stringify({ bots }, null, 2)}\n` : formatCommands(bots));
    return ExitCode.Ok;
  } catch (err) {
    return reportStartupError(err, "commands");
  }
}

function formatCommands(bots: BotCommands[]): string {
  const lines: string[] = [];
  for (const { bot, prefix, commands } of bots) {
    if (lines.length > 0) lines.push("");
    if (commands.length === 0) {
      lines.push(`${bot}: no commands`);
      continue;
    }
    lines.push(`${bot}: in direct messages, when mentioned${prefix ? `, or after "${prefix}"` : ""}`);
    for (const c of commands) {
      describeText(c, lines);
      for (const sub of c.subcommands) describeText(sub, lines);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** One command (or subcommand) in the text listing. */
function describeText(c: CommandDescription, lines: string[]): void {
  lines.push(`  ${c.usage}${c.description ? `  —  ${c.description}` : ""}`);
  for (const a of [...c.arguments, ...c.options]) {
    const name = c.options.includes(a) ? `--${a.name}` : `<${a.name}>`;
    const type = a.choices ? a.choices.join(" | ") : a.type;
    lines.push(
      `      ${name} (${type}${a.required ? "" : ", optional"})${a.description ? `: ${a.description}` : ""}`,
    );
  }
  if (c.aliases.length > 0) lines.push(`      also: ${c.aliases.join(", ")}`);
  if (c.examples.length > 0) lines.push(`      e.g. ${c.examples.join("  |  ")}`);
  if (c.permission) {
    const who = [
      ...(c.permission.roles ? [`roles ${c.permission.roles.join(", ")}`] : []),
      ...(c.permission.groups ? [`groups ${c.permission.groups.join(", ")}`] : []),
      ...(c.permission.custom ? [c.permission.custom] : []),
    ];
    lines.push(`      who: ${who.join(" or ")}`);
  }
}
