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

let program: { exported: Set<string>; errorClasses: Set<string> } | undefined;

/** Every name the entry points export, and those of them that are classes extending `BothostError`. */
function readExports(): { exported: Set<string>; errorClasses: Set<string> } {
  if (program) return program;
  const files = ENTRIES.map((f) => path.join(repoRoot, f));
  const { NodeNext } = ts.ModuleKind;
  const options = { module: NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
  const compiled = ts.createProgram(files, { ...options, allowImportingTsExtensions: true, noEmit: true });
  const checker = compiled.getTypeChecker();
  const extendsBothostError = (type: ts.Type): boolean =>
    type.symbol?.getName() === "BothostError" ||
    (type.isClassOrInterface() && (checker.getBaseTypes(type) ?? []).some(extendsBothostError));
  const symbols = files.flatMap((file) => {
    const module = checker.getSymbolAtLocation(compiled.getSourceFile(file)!);
    if (!module) throw new Error(`${file} is not a module`);
    return checker.getExportsOfModule(module);
  });
  const errorClasses = symbols.filter((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return (
      (target.flags & ts.SymbolFlags.Class) !== 0 &&
      extendsBothostError(checker.getDeclaredTypeOfSymbol(target))
    );
  });
  program = {
    exported: new Set(symbols.map((symbol) => symbol.getName())),
    errorClasses: new Set(errorClasses.map((symbol) => symbol.getName())),
  };
  return program;
}

const exportedNames = (): Set<string> => readExports().exported;

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

/**
 * errors.md says which error classes a user can import and test with `instanceof`, and to tell
 * the others apart by `code`: its list is exactly the error classes the entry points export, and
 * every `instanceof` it shows names the class tested, one the package exports (a bare "tell them
 * apart with `instanceof`" over a table would send users after classes they cannot import).
 */
it("errors.md lists exactly the error classes the package exports, and shows instanceof only with them", async () => {
  const { exported, errorClasses } = readExports();
  expect(errorClasses.has("ApiError")).toBe(true);
  const doc = await readFile(path.join(repoRoot, "docs/reference/errors.md"), "utf8");
  const paragraph = /^`bothost` exports the classes[\s\S]*?\n\n/m.exec(doc)?.[0] ?? "";
  const listed = new Set(
    [...paragraph.replace(/Tell the others[\s\S]*/, "").matchAll(/`([A-Z]\w*)`/g)].map((m) => m[1]!),
  );
  expect(listed.size).toBeGreaterThan(0);
  const problems: string[] = [];
  for (const name of errorClasses) if (!listed.has(name)) problems.push(`${name}: exported, not in the list`);
  for (const name of listed) if (!errorClasses.has(name)) problems.push(`${name}: in the list, not exported`);
  for (const [i, line] of doc.split("\n").entries()) {
    for (const m of line.matchAll(/\binstanceof\b(\s+([A-Za-z]\w*))?/g)) {
      const name = m[2];
      if (name === undefined) problems.push(`errors.md:${i + 1}: instanceof without the class it tests`);
      else if (!exported.has(name)) problems.push(`errors.md:${i + 1}: instanceof ${name}, not exported`);
    }
  }
  expect(problems).toEqual([]);
}, 60_000);
