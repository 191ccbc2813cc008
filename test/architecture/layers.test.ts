/**
 * The layers of src/, bottom to top (docs/internals/architecture.md). A module imports only from
 * its own folder or a lower layer, type-only imports included, so no folder can reach back up and
 * the folders never form a cycle.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { importsOf, sourceFiles } from "../support/import-graph.ts";

const LAYERS = [
  "errors",
  "log",
  "time",
  "template",
  "wire",
  "state",
  "config",
  "sandbox",
  "api",
  "effects",
  "pipeline",
  "events",
  "scheduler",
  "webhook",
  "bot",
  "http",
  "cluster",
  "daemon",
  "testing",
  "demo",
  "cli",
] as const;

const src = fileURLToPath(new URL("../../src/", import.meta.url));

/** The folder right under src/ a path is in; the entry points at src/ itself are "(entry)". */
function layerOf(file: string): string {
  const rel = path.relative(src, file);
  return rel.includes(path.sep) ? rel.split(path.sep)[0]! : "(entry)";
}

function rank(layer: string): number {
  return layer === "(entry)" ? LAYERS.length : LAYERS.indexOf(layer as (typeof LAYERS)[number]);
}

describe("the layers of src/", () => {
  it("places every folder of src/ in a layer", () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(folders.filter((f) => rank(f) < 0)).toEqual([]);
    expect(LAYERS.filter((l) => !folders.includes(l))).toEqual([]);
  });

  it("reads type-only, re-export, multi-line and dynamic imports", () => {
    const text = [
      'import type { A } from "../wire/a.ts";',
      'export { b } from "./b.ts";',
      "import {\n  c,\n  d,\n} from '../api/c.ts';",
      'const e = await import("../cli/e.ts");',
      'import { f } from "undici";',
    ].join("\n");
    expect(importsOf(text)).toEqual([
      { spec: "../wire/a.ts", line: 1 },
      { spec: "./b.ts", line: 2 },
      { spec: "../api/c.ts", line: 3 },
      { spec: "../cli/e.ts", line: 7 },
    ]);
  });

  it("has no module that imports from a higher layer", () => {
    const upward: string[] = [];
    for (const file of sourceFiles(src)) {
      const from = layerOf(file);
      for (const { spec, line } of importsOf(readFileSync(file, "utf8"))) {
        const to = layerOf(path.resolve(path.dirname(file), spec));
        if (to !== from && rank(to) > rank(from)) {
          upward.push(`src/${path.relative(src, file)}:${line} (${from}) imports ${spec} (${to})`);
        }
      }
    }
    expect(upward).toEqual([]);
  });
});
