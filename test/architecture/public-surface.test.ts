/**
 * The package's main entry stays small and documented: at most 72 names (60 before dialogs, the
 * types a handler's author writes helpers against, a prompt's options and answer, `Where`,
 * `Sender`, `RoleName`, `GroupPermissionError`, a progress's options and handle, and
 * `channelSetting`, `groupSetting`, `userSetting` and `snippetSetting`, which `bothost check` looks up), each with a doc comment where it is declared
 * (what an editor shows on hover). Read with the TypeScript compiler.
 */
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, it } from "vitest";

const entry = fileURLToPath(new URL("../../src/index.ts", import.meta.url));

function exportsOf(file: string): { name: string; documented: boolean }[] {
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`cannot read ${file}`);
  const module = checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`${file} is not a module`);
  return checker.getExportsOfModule(module).map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const doc = ts.displayPartsToString(target.getDocumentationComment(checker)).trim();
    return { name: symbol.getName(), documented: doc.length > 0 };
  });
}

const exported = exportsOf(entry);

it("exports at most 72 names", () => {
  expect(exported.length).toBeGreaterThan(0);
  expect(exported.length, exported.map((e) => e.name).join(", ")).toBeLessThanOrEqual(72);
});

it("documents every exported name where it is declared", () => {
  expect(exported.filter((e) => !e.documented).map((e) => e.name)).toEqual([]);
});

it("keeps internals out: no stores, coordinators, metrics classes or runtime parts", () => {
  const names = new Set(exported.map((e) => e.name));
  for (const internal of [
    "RedisStore",
    "LeaseCoordinator",
    "BothostMetrics",
    "ConversationQueue",
    "Dispatcher",
    "FileStore",
  ]) {
    expect(names.has(internal), internal).toBe(false);
  }
  for (const needed of ["defineBot", "createClient", "startDaemon", "BotContext", "GapEvent", "NoRetry"]) {
    expect(names.has(needed), needed).toBe(true);
  }
});
