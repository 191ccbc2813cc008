/**
 * Each command's `--help` (from the built CLI) and docs/reference/cli.md list the same options, so
 * neither can drift from the other: the long flags of a command's Options must be those its row in
 * cli.md's command table names (the sandbox's are in docs/reference/sandbox.md), each subcommand
 * synopsis in a help text must be written in the row, and `--config` is always `-c, --config FILE`.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, repoRoot, runCli } from "../support/cli.ts";

const read = (file: string) => readFile(path.join(repoRoot, file), "utf8");

let commands: string[];
let cliMd: string;

beforeAll(async () => {
  assertBuilt();
  const top = await runCli(["--help"]);
  commands = [...top.stdout.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!);
  cliMd = await read("docs/reference/cli.md");
});

/** The long flags of a text, `--help` and `--config` left out (every command has them). */
function flags(text: string): string[] {
  const all = [...text.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => `--${m[1]}`);
  return [...new Set(all)].filter((f) => f !== "--help" && f !== "--config").sort();
}

/** The row of cli.md's command table for `bothost <name>`, `\|` unescaped. */
function rowOf(name: string): string | undefined {
  const line = cliMd.split("\n").find((l) => l.startsWith(`| \`bothost ${name}`));
  return line?.replaceAll("\\|", "|");
}

describe("--help and docs/reference/cli.md", () => {
  it("every command has a row in the command table", () => {
    expect(commands.length).toBeGreaterThan(10);
    expect(commands.filter((c) => rowOf(c) === undefined)).toEqual([]);
  });

  // One CLI process per command, one after another: on a loaded 2-core machine that passes 20 s.
  it("each command's options are the ones its documentation names", { timeout: 60_000 }, async () => {
    const mismatches: string[] = [];
    for (const name of commands) {
      const help = (await runCli([name, "--help"])).stdout;
      const options = help.slice(help.indexOf("\nOptions:"));
      const doc = name === "sandbox" ? await read("docs/reference/sandbox.md") : rowOf(name)!;
      const [inHelp, inDoc] = [flags(options.split("\n\n")[0]!), flags(doc)];
      if (inHelp.join() !== inDoc.join()) {
        mismatches.push(
          `${name}: --help has ${inHelp.join(" ") || "none"}; docs have ${inDoc.join(" ") || "none"}`,
        );
      }
      for (const line of options.split("\n").filter((l) => l.includes("--config"))) {
        if (!/^ {2}-c, --config FILE {2,}/.test(line)) mismatches.push(`${name}: ${line.trim()}`);
      }
      // Subcommand synopses in the help text (`  bothost failed show ID [--json]   …`).
      for (const m of help.matchAll(new RegExp(`^ {2}bothost ${name} (\\S.*?)(?: {2,}|$)`, "gm"))) {
        if (!rowOf(name)!.includes(`\`${m[1]}\``)) mismatches.push(`${name}: cli.md lacks \`${m[1]}\``);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("the flag reader sees what a drift would change", () => {
    expect(flags("  -c, --config FILE  x\n      --json  y\n  --follow")).toEqual(["--follow", "--json"]);
  });
});
