/**
 * The `bothost` command, loaded by the entry (main.ts) once the compile cache is on. Each
 * subcommand is loaded only when it runs, so `bothost --help` stays fast.
 */
import { readFileSync } from "node:fs";
import { ExitCode } from "../config/exit-codes.ts";
import { suggest } from "../errors/did-you-mean.ts";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

const commands: Record<string, Command> = {
  backtest: {
    summary: "Run a bot over past messages with its writes captured: what it would have done",
    run: async (argv) => (await import("./backtest.ts")).runBacktestCommand(argv),
  },
  check: {
    summary: "Validate the config and modules, then check each bot's credentials and server",
    run: async (argv) => (await import("./check.ts")).runCheckCommand(argv),
  },
  commands: {
    summary: "List every bot's commands, arguments and permissions (offline; --json for a registry)",
    run: async (argv) => (await import("./commands.ts")).runCommandsCommand(argv),
  },
  demo: {
    summary: "Play a short scene with the shipped bots on the embedded sandbox",
    run: async (argv) => (await import("./demo.ts")).runDemoCommand(argv),
  },
  dev: {
    summary: "Run the bots on the sandbox with a chat page to talk to them; reload on edits",
    run: async (argv) => (await import("./dev.ts")).runDevCommand(argv),
  },
  dialogs: {
    summary: "List the running daemon's open dialogs (ctx.prompt), or end one",
    run: async (argv) => (await import("./dialogs.ts")).runDialogsCommand(argv),
  },
  failed: {
    summary: "List, show, retry or drop dead letters (events whose handler failed every attempt)",
    run: async (argv) => (await import("./failed.ts")).runFailedCommand(argv),
  },
  init: {
    summary: "Create a bothost project: a bot, its test, a config for the embedded sandbox",
    run: async (argv) => (await import("./init.ts")).runInitCommand(argv),
  },
  reload: {
    summary: "Make the running daemon read its config again and apply what changed",
    run: async (argv) => (await import("./reload.ts")).runReloadCommand(argv),
  },
  run: {
    summary: "Run every bot in the config until SIGINT/SIGTERM",
    run: async (argv) => (await import("./run.ts")).runCommand(argv),
  },
  sandbox: {
    summary: "Run the in-memory chat server (prints each account's email and API key)",
    run: async (argv) => (await import("./sandbox.ts")).runSandboxCommand(argv),
  },
  status: {
    summary: "Ask the running daemon what each bot is doing (--json for scripts)",
    run: async (argv) => (await import("./status.ts")).runStatusCommand(argv),
  },
  schedule: {
    summary: "Preview the next runs of every recurring announcement and cron job (offline)",
    run: async (argv) => (await import("./schedule.ts")).runScheduleCommand(argv),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length), 8);
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `bothost ${pkg.version}: chat bots and webhook automations for Zulip-compatible servers

Usage: bothost <command> [options]

Commands:
${lines.join("\n")}

Options:
  -h, --help      Show this text (also "bothost help"; "bothost help <command>" or "bothost <command> --help" for a command's options)
  -v, --version   Print the version

Exit codes: 0 ok, 1 runtime failure, 2 invalid config or usage, 3 authentication failed, 64 unknown command,
75 try again shortly (bothost dialogs end).
`;
}

async function main(argv: string[]): Promise<number> {
  // "bothost help run" is "bothost run --help" (and "bothost help rn" an unknown command).
  const [name, ...rest] = argv[0] === "help" && argv[1] !== undefined ? [argv[1], "--help"] : argv;
  if (name === "--version" || name === "-v") {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(usage());
    return 0;
  }
  if (name.startsWith("-")) {
    process.stderr.write(`bothost: unknown option "${name}". Run "bothost --help" for the options.\n`);
    return ExitCode.ConfigInvalid;
  }
  const command = commands[name];
  if (!command) {
    const hint = suggest(name, Object.keys(commands));
    const mean = hint ? ` (did you mean "${hint}"?)` : "";
    process.stderr.write(`bothost: unknown command "${name}"${mean}. Run "bothost --help" for the list.\n`);
    return ExitCode.UnknownCommand;
  }
  return command.run(rest);
}

process.exitCode = await main(process.argv.slice(2));
