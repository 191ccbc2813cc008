/**
 * docs/reference/sandbox.md lists every option of `startSandbox` (SandboxOptions) and every flag
 * of `bothost sandbox`, and none they do not take: read from the sources' text, compared both ways.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { repoRoot } from "../support/cli.ts";

const read = (file: string) => readFile(path.join(repoRoot, file), "utf8");

/** The table's first column, in backticks, of the table that follows `heading` in `doc`. */
function tableKeys(doc: string, heading: string, key: RegExp): string[] {
  const start = doc.indexOf(heading);
  expect(start, heading).toBeGreaterThan(-1);
  const rows = doc.slice(start).split("\n").slice(1);
  const table = rows.slice(rows.findIndex((l) => l.startsWith("|")));
  const end = table.findIndex((l) => !l.startsWith("|"));
  return table
    .slice(2, end)
    .map((l) => key.exec(l)?.[1])
    .filter((k): k is string => k !== undefined);
}

it("sandbox.md lists every startSandbox option and every bothost sandbox flag, and only those", async () => {
  const doc = await read("docs/reference/sandbox.md");
  const types = await read("src/sandbox/types.ts");
  const block = /export interface SandboxOptions \{([\s\S]*?)\n\}/.exec(types)![1]!;
  const options = [...block.matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]!);
  expect(options).toContain("port");
  const documented = tableKeys(doc, "`startSandbox(options?: SandboxOptions)", /^\| `(\w+)` \|/);
  expect(documented.sort()).toEqual([...options].sort());

  const cli = await read("src/cli/sandbox.ts");
  const parsed = /commandArgs\(\s*"sandbox",[\s\S]*?\{([\s\S]*?)\n {4}\},/.exec(cli)![1]!;
  const flags = [...parsed.matchAll(/^\s*"?([\w-]+)"?: \{ type:/gm)].map((m) => `--${m[1]}`);
  expect(flags).toContain("--port");
  const documentedFlags = tableKeys(doc, "## Running it", /^\| `(--[\w-]+)/);
  expect(documentedFlags.sort()).toEqual(flags.sort());
});
