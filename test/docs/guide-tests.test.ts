/**
 * Every vitest test the guides show (a TypeScript sample that imports `bothost/testing/vitest`
 * and declares a `test(`), run as its reader would run it: the sample's text, written to a file
 * in a folder of the repository's root (so that `import … from "bothost"` resolves as in a
 * project, and `../bots/echo.ts` is the echo bot the guide has the reader copy), imported here
 * so that its tests are this file's, each under the guide's file and line. An org file the
 * sample names (`org: "org.yaml"`) is the project's own and not in the guide: a small one is
 * written next to the sample and named in its place.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.ts";

const ORG = `users:
  - { email: owner@sandbox.example, full_name: Olive Owner, role: owner }
  - { email: member@sandbox.example, full_name: Mel Member }
channels:
  - name: general
`;

interface GuideTest {
  at: string;
  code: string;
}

function guideTests(): GuideTest[] {
  const dir = path.join(repoRoot, "docs/guide");
  const out: GuideTest[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .sort()) {
    const text = readFileSync(path.join(dir, file), "utf8");
    for (const m of text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
      const code = m[1]!;
      if (!code.includes('from "bothost/testing/vitest"') || !/\btest\(/.test(code)) continue;
      out.push({ at: `docs/guide/${file}:${text.slice(0, m.index).split("\n").length}`, code });
    }
  }
  return out;
}

const samples = guideTests();
const dir = mkdtempSync(path.join(repoRoot, ".guide-tests-"));
const org = path.join(dir, "org.yaml");
writeFileSync(org, ORG);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("there are some, in testing.md and conversations.md", () => {
  const files = new Set(samples.map((s) => s.at.replace(/:\d+$/, "")));
  expect([...files]).toEqual(
    expect.arrayContaining(["docs/guide/testing.md", "docs/guide/conversations.md"]),
  );
  expect(samples.length).toBeGreaterThan(10);
});

for (const [n, sample] of samples.entries()) {
  describe(sample.at, async () => {
    const file = path.join(dir, `sample-${n}.ts`);
    writeFileSync(file, sample.code.replaceAll('org: "org.yaml"', `org: ${JSON.stringify(org)}`));
    await import(pathToFileURL(file).href);
  });
}
