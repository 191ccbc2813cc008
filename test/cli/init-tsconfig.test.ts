/**
 * The tsconfig `bothost init` writes makes `tsc` (the project's `npm run check`) refuse an import
 * of a type written without `type`: Node.js's own type stripping keeps such an import, and the
 * file then fails to load when Node runs it as it is.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import ts from "typescript";
import { afterAll, expect, it } from "vitest";
import { initFiles } from "../../src/cli/init-files.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

it("has tsc refuse a type imported as a value", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-init-tsconfig-"));
  dirs.push(dir);
  await mkdir(path.join(dir, "bots"));
  await writeFile(path.join(dir, "tsconfig.json"), initFiles("t")["tsconfig.json"]!);
  await writeFile(path.join(dir, "package.json"), '{ "type": "module" }\n');
  await writeFile(
    path.join(dir, "bots", "kinds.ts"),
    "export type Kind = string;\nexport const kinds = 1;\n",
  );
  await writeFile(
    path.join(dir, "bots", "uses.ts"),
    'import { Kind, kinds } from "./kinds.ts";\nexport const k: Kind = String(kinds);\n',
  );
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(dir, "tsconfig.json"),
    { types: [], noLib: true },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  )!;
  expect(config.errors).toEqual([]);
  // No lib: the check needs none, and a program without one is made in a fraction of the time.
  const program = ts.createProgram(config.fileNames, config.options);
  const uses = program.getSourceFile(path.join(dir, "bots", "uses.ts"))!;
  // TS1484: "'Kind' is a type and must be imported using a type-only import".
  expect(program.getSemanticDiagnostics(uses).map((d) => d.code)).toContain(1484);
});
