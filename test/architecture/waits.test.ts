/**
 * Every `vi.waitFor` in test/ names its timeout. vitest's default is 1 s: a few HTTP round trips
 * on a loaded 2-core machine, so a wait for something that does come fails there. (`expect.poll`
 * has its default raised in vitest.config.ts; `vi.waitFor` has no such setting.)
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { code, filesUnder } from "../support/source-code.ts";

/** Lines (1-based) of each `vi.waitFor(` call whose arguments say no `timeout`. */
function waitsWithoutTimeout(text: string): number[] {
  const source = code(text);
  const found: number[] = [];
  for (const match of source.matchAll(/\bvi\.waitFor\s*\(/g)) {
    const open = (match.index ?? 0) + match[0].length;
    let depth = 1;
    let end = open;
    while (end < source.length && depth > 0) {
      const c = source[end++];
      if (c === "(") depth++;
      else if (c === ")") depth--;
    }
    if (!/\btimeout\s*:/.test(source.slice(open, end))) found.push(source.slice(0, open).split("\n").length);
  }
  return found;
}

const root = fileURLToPath(new URL("../", import.meta.url));

describe("vi.waitFor in test/", () => {
  it("finds a call that leaves the timeout to vitest's default, not one that names it", () => {
    const text = [
      "await vi.waitFor(() => expect(said()).toHaveLength(2));",
      "await vi.waitFor(() => expect(f(1, g(2))).toBe(3), { timeout: 5_000 });",
      "await vi.waitFor(",
      "  () => {",
      "    if (!ready()) throw new Error('not yet');",
      "  },",
      "  { interval: 5 },",
      ");",
    ].join("\n");
    expect(waitsWithoutTimeout(text)).toEqual([1, 3]);
  });

  it("every call names its timeout", () => {
    const files = filesUnder(
      root,
      (f) => /\.(?:ts|mjs)$/.test(f) && !f.startsWith("fixtures/") && f !== "architecture/waits.test.ts",
    );
    const found = files.flatMap(({ file, text }) =>
      waitsWithoutTimeout(text).map((line) => `test/${file}:${line}`),
    );
    expect(found).toEqual([]);
  });
});
