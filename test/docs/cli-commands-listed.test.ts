/**
 * docs/reference/cli.md has a row for every command of `bothost` and none it lacks, and each row
 * names the options the command's `--help` lists (`--config` and `--help` aside: the page says
 * them once for all; `bothost sandbox`'s are in sandbox.md), and no option the command lacks.
 * Read from the sources' text: src/cli/bothost.ts for the commands, each command's help for its options.
 * The words `bothost` takes in a command's place (`--version`, `-v`, `help`, `--help`, `-h`) are
 * each in the synopsis at the top of cli.md, and in the top-level help's Options.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { repoRoot } from "../support/cli.ts";

const read = (file: string) => readFile(path.join(repoRoot, file), "utf8");
const COMMON = new Set(["--config", "--help"]);

it("cli.md lists every bothost command with the options its help gives, and only those", async () => {
  const main = await read("src/cli/bothost.ts");
  const commands = [
    ...main.matchAll(/^ {2}(\w+): \{\n\s+summary:[\s\S]*?import\("\.\/([\w-]+)\.ts"\)/gm),
  ].map((m) => ({ name: m[1]!, file: `src/cli/${m[2]}.ts` }));
  expect(commands.map((c) => c.name)).toContain("dialogs");
  const doc = await read("docs/reference/cli.md");
  const rows = new Map(
    [...doc.matchAll(/^\| `bothost (\w+)[^`]*` \|.*$/gm)].map((m) => [m[1]!, m[0]] as const),
  );

  const problems: string[] = [];
  for (const { name, file } of commands) {
    const row = rows.get(name);
    if (row === undefined) {
      problems.push(`${name}: no row`);
      continue;
    }
    if (name === "sandbox") continue;
    const source = await read(file);
    const options = /\nOptions:\n([\s\S]*?)(?:`|\n\n)/.exec(source)?.[1] ?? "";
    const helpFlags = new Set([...options.matchAll(/(?:^|[\s,])(--[a-z][a-z-]*)/gm)].map((m) => m[1]!));
    const rowFlags = new Set([...row.matchAll(/(--[a-z][a-z-]*)/g)].map((m) => m[1]!));
    for (const f of helpFlags)
      if (!COMMON.has(f) && !rowFlags.has(f)) problems.push(`${name}: ${f} not in cli.md`);
    for (const f of rowFlags) if (!helpFlags.has(f)) problems.push(`${name}: ${f} not in its --help`);
  }
  for (const name of rows.keys())
    if (!commands.some((c) => c.name === name)) problems.push(`${name}: no such command`);
  expect(problems).toEqual([]);
});

it("cli.md's synopsis and the top-level help name every word bothost takes in a command's place", async () => {
  const main = await read("src/cli/bothost.ts");
  const words = [...main.matchAll(/\bname === "([^"]+)"/g)].map((m) => m[1]!);
  expect(words).toContain("--version");
  const doc = await read("docs/reference/cli.md");
  const synopsis = /^```\n(bothost [\s\S]*?)```/m.exec(doc)?.[1] ?? "";
  const said = new Set(synopsis.split(/[\s|]+/));
  const options = /\nOptions:\n([\s\S]*?)\n\n/.exec(main)?.[1] ?? "";
  const helpSays = new Set(options.split(/[\s,]+/));
  const problems: string[] = [];
  for (const word of words) {
    if (!said.has(word)) problems.push(`${word}: not in cli.md's synopsis`);
    if (word.startsWith("-") && !helpSays.has(word))
      problems.push(`${word}: not in bothost --help's Options`);
  }
  expect(problems).toEqual([]);
});

it("README.md's command table has a row for every bothost command, and its exit codes every code the help gives", async () => {
  const main = await read("src/cli/bothost.ts");
  const commands = [...main.matchAll(/^ {2}(\w+): \{\n\s+summary:/gm)].map((m) => m[1]!);
  const readme = await read("README.md");
  const rows = new Set([...readme.matchAll(/^\| `bothost (\w+)[^`]*` \|/gm)].map((m) => m[1]!));
  expect(commands.filter((c) => !rows.has(c))).toEqual([]);
  const helpCodes = [.../Exit codes:([^`]*)/.exec(main)![1]!.matchAll(/\b(\d+) [a-z]/g)].map((m) => m[1]!);
  const readmeCodes = /Exit codes:([\s\S]*?)\(\[reference\]/.exec(readme)?.[1] ?? "";
  expect(helpCodes.length).toBeGreaterThan(4);
  expect(helpCodes.filter((code) => !new RegExp(`\\b${code} `).test(readmeCodes))).toEqual([]);
});
