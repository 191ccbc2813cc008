/**
 * What `npm pack` would ship: the built code, the shipped bots, the example config, the docs, the README;
 * never tests, benchmarks, fixtures or sources of our own tooling. Installing the package runs no
 * script of ours (the build happens at pack time, in `prepack`).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { assertBuilt } from "../support/cli.ts";

const run = promisify(execFile);

it("npm pack ships dist, bots, the example config, the docs and the README, and nothing else", async () => {
  assertBuilt();
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    maxBuffer: 1 << 24,
  });
  const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map(
    (f) => f.path,
  );
  const tops = new Set(files.map((f) => f.split("/")[0]));
  expect([...tops].sort()).toEqual([
    "README.md",
    "bots",
    "config.example.yaml",
    "dist",
    "docs",
    "package.json",
  ]);
  expect(files).toContain("dist/index.js");
  expect(files).toContain("dist/index.d.ts");
  expect(files).toContain("dist/cli/main.js");
  expect(files.filter((f) => /(^|\/)(test|bench|fixtures)\//.test(f) || f.endsWith(".test.ts"))).toEqual([]);
});

it("the tarball npm pack writes in the clone is ignored by git", async (ctx) => {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    maxBuffer: 1 << 24,
  });
  const tarball = (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename;
  expect(tarball).toMatch(/^bothost-.*\.tgz$/);
  // Outside a git checkout (an unpacked source tarball) there is nothing to check.
  const inGit = await run("git", ["rev-parse", "--is-inside-work-tree"]).then(
    () => true,
    () => false,
  );
  if (!inGit) return ctx.skip();
  // check-ignore exits 0 when the path is ignored, 1 when it is not.
  const ignored = await run("git", ["check-ignore", "--no-index", "-q", tarball]).then(
    () => true,
    () => false,
  );
  expect(ignored, `${tarball} is not in .gitignore`).toBe(true);
});

it("installing the package runs no lifecycle script", () => {
  const { scripts } = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
  for (const hook of ["preinstall", "install", "postinstall", "prepare"])
    expect(scripts[hook], hook).toBeUndefined();
  expect(scripts.prepack).toBe("npm run build");
});
