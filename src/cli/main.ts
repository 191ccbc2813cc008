#!/usr/bin/env node
/**
 * The `bothost` command. Each subcommand lives in its own file under src/cli/.
 */
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

const usage = `bothost ${pkg.version}: chat bots and webhook automations for Zulip-compatible servers

Usage: bothost <command> [options]

Commands:
  help        Show this text

Options:
  --help      Show this text
  --version   Print the version
`;

const [command] = process.argv.slice(2);
if (command === "--version" || command === "-v") {
  process.stdout.write(`${pkg.version}\n`);
} else if (command === undefined || command === "help" || command === "--help" || command === "-h") {
  process.stdout.write(usage);
} else {
  process.stderr.write(`bothost: unknown command "${command}". Run "bothost --help" for the list.\n`);
  process.exitCode = 64;
}
