/**
 * A config for `bothost backtest` tests: one bot on a sandbox (a real server to the CLI), its key
 * taken from the sandbox, its state in `dir`.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { repoRoot } from "./cli.ts";

export interface BacktestBot {
  name: string;
  /** A module under the repository, e.g. `test/fixtures/bots/keyword-reporter.ts`. */
  module: string;
  email: string;
  /** The `settings:` value, in YAML flow style. */
  settings?: string;
}

/** Writes `dir/bothost.yaml` and returns its path. */
export async function writeBacktestConfig(dir: string, sandbox: Sandbox, bot: BacktestBot): Promise<string> {
  const file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    [
      `server:\n  url: ${sandbox.url}`,
      `state:\n  path: ${join(dir, "state")}`,
      "bots:",
      `  ${bot.name}:`,
      `    module: ${join(repoRoot, bot.module)}`,
      `    email: ${bot.email}`,
      `    api_key: ${sandbox.control.apiKeyOf(bot.email)}`,
      ...(bot.settings === undefined ? [] : [`    settings: ${bot.settings}`]),
    ].join("\n"),
  );
  return file;
}
