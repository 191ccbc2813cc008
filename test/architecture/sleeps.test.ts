/**
 * No test checks a state right after a fixed wall-clock sleep. Such a check shows that something
 * did not happen within a guessed time: on a slow machine it passes without testing anything,
 * on a loaded one it fails. A test waits instead for an event ordered after what must not happen
 * (a later message handled, a marker seen), or moves a test clock (docs/guide/testing.md).
 * Found: a statement that sleeps on real time (`await new Promise((r) => setTimeout(r, n))`, or
 * `await` of a helper of the file that does, or of node:timers/promises' setTimeout), followed,
 * before any other `await` and inside the same block, by a plain `expect(…)`. Sleeps that pace
 * traffic or widen a window, with no check reading their outcome, are not its concern.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { code, filesUnder } from "../support/source-code.ts";

/** Files another change rewrites now (issue 47); each must still hold such a check, else drop it here. */
const KNOWN: Record<string, string> = {};

/** A bare timer call (not a clock's method). */
const TIMER = /(?<![\w$.])setTimeout\s*\(/;

/** Names the file gives to sleeping: one-line helpers around setTimeout, and timers/promises' setTimeout. */
function sleepers(lines: readonly string[]): string[] {
  const names: string[] = [];
  for (const line of lines) {
    const helper = /^\s*(?:export\s+)?(?:const|let|function)\s+([\w$]+)\b.*\bnew Promise\b/.exec(line);
    if (helper && TIMER.test(line)) names.push(helper[1]!);
    const imported = /import\s*\{([^}]*)\}\s*from\s*["']node:timers\/promises["']/.exec(line);
    for (const part of imported?.[1]?.split(",") ?? []) {
      const [name, alias] = part.trim().split(/\s+as\s+/);
      if (name === "setTimeout") names.push(alias ?? name);
    }
  }
  return names;
}

/** Lines (1-based) of each `expect(` that follows a fixed sleep, in the sense above. */
function checksAfterSleeps(text: string): number[] {
  const lines = code(text).split("\n");
  const names = sleepers(lines);
  const helper = names.length > 0 ? new RegExp(`^\\s*await\\s+(?:${names.join("|")})\\s*\\(`) : undefined;
  const found: number[] = [];
  for (const [i, line] of lines.entries()) {
    const promised = /^\s*await\s+new\s+Promise\b/.test(line) && TIMER.test(lines.slice(i, i + 3).join(" "));
    if (!promised && !helper?.test(line)) continue;
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j]!.trim();
      if (/\bawait\b/.test(next) || next.startsWith("}")) break;
      if (/^expect\s*\(/.test(next)) {
        found.push(j + 1);
        break;
      }
    }
  }
  return found;
}

const root = fileURLToPath(new URL("../", import.meta.url));

/** The tests and their helpers; not fixtures/, the subjects some tests run (one leaks a rejection on purpose). */
const testFiles = () => filesUnder(root, (f) => /\.(?:ts|mjs)$/.test(f) && !f.startsWith("fixtures/"));

describe("sleeps in test/", () => {
  it("finds a check after a sleep, and not a paced loop, a wait on an event, or a clock's timer", () => {
    const text = [
      "const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));",
      'import { setTimeout as nap } from "node:timers/promises";',
      "await new Promise((r) => setTimeout(r, 300));",
      "expect(polls()).toBe(1);",
      "await pause(200);",
      'send("x");',
      "expect(said()).toEqual([]);",
      "await nap(50);",
      "expect(seen).toEqual([]);",
      "for (const m of all) {",
      "  await pause(600);",
      "}",
      "await pause(100);",
      "await expect.poll(said).toEqual(['x']);",
      "await new Promise<void>((resolve) => clock.setTimeout(resolve, 90_000));",
      "expect(fired).toBe(1);",
      "await new Promise((resolve) => setImmediate(resolve));",
      "expect(turned).toBe(true);",
      "// await pause(1); expect(x) in a comment",
    ].join("\n");
    expect(checksAfterSleeps(text)).toEqual([4, 7, 9]);
  });

  it("no test checks a state right after a fixed wall-clock sleep", () => {
    const found = testFiles()
      .filter(({ file }) => !(file in KNOWN))
      .flatMap(({ file, text }) => checksAfterSleeps(text).map((line) => `${file}:${line}`));
    expect(found, "wait for an event ordered after what must not happen, or move a test clock").toEqual([]);
  });

  it.each(Object.keys(KNOWN))("%s, let off for now, still has such a check", (file) => {
    expect(checksAfterSleeps(readFileSync(path.join(root, file), "utf8"))).not.toEqual([]);
  });
});
