/**
 * The graph of source files that import each other, for the architecture tests: the relative
 * imports a file names, the graph they draw over a set of folders, and its circles.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** Static imports and re-exports (type-only included), side-effect imports, dynamic import(). */
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^"';]*?\sfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Every relative import of `text`, with the line it starts on. */
export function importsOf(text: string): { spec: string; line: number }[] {
  const found: { spec: string; line: number }[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (spec.startsWith("."))
      found.push({ spec, line: text.slice(0, m.index + m[0].search(/\S/)).split("\n").length });
  }
  return found;
}

/** The .ts files under `dir`, as absolute paths. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(dir, f));
}

/**
 * Each .ts file under `dirs` and the files among them it imports. A `.js` specifier names its
 * `.ts` source; a specifier that names no file of the graph (a package, a generated file's text)
 * draws no edge.
 */
export function importGraph(dirs: string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>(dirs.flatMap(sourceFiles).map((f) => [f, new Set()]));
  for (const [file, deps] of graph) {
    for (const { spec } of importsOf(readFileSync(file, "utf8"))) {
      const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts");
      if (graph.has(target)) deps.add(target);
    }
  }
  return graph;
}

/**
 * The circles of `graph`: its strongly connected components of more than one node, and any node
 * that imports itself, found with Tarjan's algorithm. Each circle is sorted, and so is the list.
 */
export function circlesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];

  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.has(node)) circles.push(component.sort());
  };

  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
