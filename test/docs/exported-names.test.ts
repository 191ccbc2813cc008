/**
 * The guides and the README name only what a user can import: every compound PascalCase name in
 * backticks in their prose (`PromptError`, `BotContext<S>`, `TestMessage[]`), and every one in a comment of a code
 * sample (`// SavedSnippet | undefined`), is exported by "bothost", "bothost/testing" or
 * "bothost/testing/vitest"; so is every function any doc says to call ("Call `fn()`"). Read with
 * the TypeScript compiler, from the entry points' sources.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";
import { repoRoot } from "../support/cli.ts";

const ENTRIES = ["src/index.ts", "src/testing.ts", "src/testing/vitest.ts"];

function exportedNames(): Set<string> {
  const files = ENTRIES.map((f) => path.join(repoRoot, f));
  const { NodeNext } = ts.ModuleKind;
  const options = { module: NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
  const program = ts.createProgram(files, { ...options, allowImportingTsExtensions: true, noEmit: true });
  const checker = program.getTypeChecker();
  return new Set(
    files.flatMap((file) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(file)!);
      if (!module) throw new Error(`${file} is not a module`);
      return checker.getExportsOfModule(module).map((symbol) => symbol.getName());
    }),
  );
}

/** `PromptError`, `ScheduledMessageInfo`: two words or more, so `GET`, `Date` and `LOCK` are not. */
const COMPOUND = /^(?:[A-Z][a-z0-9]+){2,}$/;

/** Where each name is mentioned: prose in backticks, and comments inside code samples. */
function mentions(file: string, text: string): { name: string; at: string }[] {
  const found: { name: string; at: string }[] = [];
  let inCode = false;
  for (const [i, line] of text.split("\n").entries()) {
    if (/^\s*```/.test(line)) {
      inCode = !inCode;
      continue;
    }
    const at = `${file}:${i + 1}`;
    const part = inCode ? (/(?:\/\/|#)(.*)$/.exec(line)?.[1] ?? "") : line;
    const words = inCode
      ? part.match(/\b[A-Z]\w*\b/g)
      : [...line.matchAll(/`([A-Za-z]\w*)(?:\[\]|<[^`]*>)?`/g)].map((m) => m[1]!);
    for (const name of words ?? []) if (COMPOUND.test(name)) found.push({ name, at });
  }
  return found;
}

// A whole TypeScript program of the sources: seconds of CPU, many more on a loaded machine.
it("every type, class or object the guides name, and every function a doc says to call, is exported by the package", async () => {
  const exported = exportedNames();
  expect(exported.has("PromptError")).toBe(true);
  const guides = (await readdir(path.join(repoRoot, "docs/guide")))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/guide/${f}`);
  const missing: string[] = [];
  for (const file of ["README.md", ...guides.sort(), "docs/reference/types.md", "docs/reference/client.md"]) {
    const text = await readFile(path.join(repoRoot, file), "utf8");
    for (const { name, at } of mentions(file, text)) {
      if (!exported.has(name)) missing.push(`${at}: ${name}`);
    }
  }
  // "Call `fn()`" in any doc tells a user to call a function of the package: it must be exported.
  const references = (await readdir(path.join(repoRoot, "docs/reference")))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/reference/${f}`);
  for (const file of ["README.md", ...guides, ...references]) {
    const text = await readFile(path.join(repoRoot, file), "utf8");
    for (const m of text.matchAll(/\bcall `([a-z]\w*)\(\)`/gi)) {
      if (!exported.has(m[1]!)) missing.push(`${file}: ${m[1]}()`);
    }
  }
  expect(missing).toEqual([]);
}, 60_000);

/** `defineBot(…)`, `channelSetting()`: a call of a bare function, in backticks in prose. */
function calledFunctions(text: string): { name: string; line: number }[] {
  const found: { name: string; line: number }[] = [];
  let inCode = false;
  for (const [i, line] of text.split("\n").entries()) {
    if (/^\s*```/.test(line)) inCode = !inCode;
    else if (!inCode)
      for (const m of line.matchAll(/`([a-z][A-Za-z0-9]*)\(/g))
        if (m[1] !== "import") found.push({ name: m[1]!, line: i + 1 });
  }
  return found;
}

it("every function the config and types references call by name is exported by the package", async () => {
  const exported = exportedNames();
  const missing: string[] = [];
  for (const file of ["docs/reference/config.md", "docs/reference/types.md"]) {
    const text = await readFile(path.join(repoRoot, file), "utf8");
    for (const { name, line } of calledFunctions(text))
      if (!exported.has(name)) missing.push(`${file}:${line}: ${name}`);
  }
  expect(missing).toEqual([]);
}, 60_000);
