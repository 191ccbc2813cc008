/**
 * No two modules of the dispatch pipeline (src/pipeline/, dialogs included) import each other,
 * types included: each stage reads what comes before it, never the other way round.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../../src/pipeline", import.meta.url));

function modules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return modules(file);
    return name.endsWith(".ts") ? [file] : [];
  });
}

function importsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8");
  const found = new Set<string>();
  for (const m of text.matchAll(/(?:import|export)[^;]*?from "(\.[^"]+)"/g)) {
    found.add(path.normalize(path.join(path.dirname(file), m[1]!)));
  }
  return found;
}

it("has no two modules that import each other", () => {
  const files = modules(root);
  expect(files.length).toBeGreaterThan(10);
  const edges = new Map(files.map((f) => [f, importsOf(f)]));
  const pairs: string[] = [];
  for (const [a, deps] of edges) {
    for (const b of deps) {
      if (a < b && edges.get(b)?.has(a))
        pairs.push(`${path.relative(root, a)} <-> ${path.relative(root, b)}`);
    }
  }
  expect(pairs).toEqual([]);
});
