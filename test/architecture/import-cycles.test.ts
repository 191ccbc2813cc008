/**
 * No circle of files in src/ or bots/: no file reaches itself by following imports, type-only
 * imports included (a reader still has to open the other file to follow it). Circles of any
 * length are found, as the strongly connected components of the file import graph.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { circlesOf, importGraph, importsOf } from "../support/import-graph.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** A graph from `"a>b c"`-style lines: each node, then the nodes it imports. */
function graphOf(...lines: string[]): Map<string, Set<string>> {
  return new Map(
    lines.map((line) => {
      const [from, to = ""] = line.split(">");
      return [from!, new Set(to.split(" ").filter(Boolean))];
    }),
  );
}

describe("circlesOf", () => {
  it("finds a circle of any length, and only the files on it", () => {
    expect(circlesOf(graphOf("a>b", "b>c", "c>a d", "d>e", "e>"))).toEqual([["a", "b", "c"]]);
    expect(circlesOf(graphOf("a>b", "b>a", "c>d", "d>e", "e>f", "f>c"))).toEqual([
      ["a", "b"],
      ["c", "d", "e", "f"],
    ]);
  });

  it("finds a file that imports itself, and nothing in a graph without circles", () => {
    expect(circlesOf(graphOf("a>a b", "b>"))).toEqual([["a"]]);
    expect(circlesOf(graphOf("a>b c", "b>c", "c>d", "d>"))).toEqual([]);
  });

  it("reads side-effect and dynamic imports besides static ones", () => {
    const text = 'import "./setup.ts";\nconst m = await import("../m.ts");\nimport type { T } from "./t.ts";';
    expect(importsOf(text).map((i) => i.spec)).toEqual(["./setup.ts", "../m.ts", "./t.ts"]);
  });
});

describe("the files of src/ and bots/", () => {
  const graph = importGraph([path.join(root, "src"), path.join(root, "bots")]);
  const name = (file: string) => path.relative(root, file);

  it("are read with their imports", () => {
    const edges = [...graph.values()].reduce((n, deps) => n + deps.size, 0);
    expect(graph.size).toBeGreaterThan(250);
    expect(edges).toBeGreaterThan(graph.size);
    expect([...graph.get(path.join(root, "src/index.ts"))!].map(name)).toContain("src/bot/define-bot.ts");
  });

  it("form no circle", () => {
    const circles = circlesOf(graph).map((files) =>
      files.flatMap((a) =>
        [...graph.get(a)!].filter((b) => files.includes(b)).map((b) => `${name(a)} -> ${name(b)}`),
      ),
    );
    expect(circles).toEqual([]);
  });
});
