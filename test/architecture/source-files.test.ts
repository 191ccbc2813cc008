/**
 * Limits every module of src/ keeps: small enough to read in one sitting, and no code generated at
 * run time (it would hide behaviour from the typechecker and break silently on a dependency update).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const MAX_LINES = 400;
const src = fileURLToPath(new URL("../../src/", import.meta.url));
const GENERATED_CODE =
  /\bnew\s+Function\s*\(|(?<![.\w])eval\s*\(|\bvm\.(?:runIn|compile)|from\s+["']node:vm["']/;

function sources(): { name: string; text: string }[] {
  return readdirSync(src, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => ({ name: `src/${f}`, text: readFileSync(path.join(src, f), "utf8") }));
}

/** Lines as `wc -l` counts them: newline characters. */
function lineCount(text: string): number {
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

describe("the modules of src/", () => {
  it(`have at most ${MAX_LINES} lines each`, () => {
    const long = sources()
      .filter((s) => lineCount(s.text) > MAX_LINES)
      .map((s) => `${s.name}: ${lineCount(s.text)} lines`);
    expect(long).toEqual([]);
  });

  it("generate no code at run time", () => {
    expect(GENERATED_CODE.test("const f = new Function('a', 'return a');")).toBe(true);
    expect(GENERATED_CODE.test("const v = eval(text);")).toBe(true);
    expect(GENERATED_CODE.test("import vm from 'node:vm';")).toBe(true);
    expect(GENERATED_CODE.test("schema.evaluate(x); retrieval(y);")).toBe(false);
    const generating = sources()
      .filter((s) => GENERATED_CODE.test(s.text))
      .map((s) => s.name);
    expect(generating).toEqual([]);
  });
});
