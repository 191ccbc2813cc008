/**
 * `bothost init` as a newcomer runs it: the project it writes passes `bothost check` and its own
 * tests unedited, with the package as `npm pack` makes it unpacked into the project's
 * node_modules and its bin linked, as an install puts them (no network: the package's
 * dependencies, zod and vitest come from ours). Its tests show a command, a refused command and a
 * reminder delivered by moving the sandbox clock.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt, hasStackTrace, repoRoot, runCli } from "../support/cli.ts";

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-init-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

it("writes a project whose check and tests pass unedited", async () => {
  const project = path.join(dir, "my-bots");
  const created = await runCli(["init", project]);
  expect(created.code).toBe(0);
  expect(created.stdout).toContain(
    `Next: cd ${project} && npm install && npm run dev   (a chat page to talk to the bots; npm start runs them, npm test tests them)\n`,
  );
  expect((await readdir(project)).sort()).toEqual(
    [
      ".gitignore",
      "README.md",
      "bothost.yaml",
      "bots",
      "org.yaml",
      "package.json",
      "test",
      "tsconfig.json",
    ].sort(),
  );
  // The state and a data-keeping sandbox's files (the getting-started guide's names) stay out of git.
  expect((await readFile(path.join(project, ".gitignore"), "utf8")).split("\n")).toEqual(
    expect.arrayContaining([
      "node_modules",
      ".bothost",
      ".bothost-sandbox",
      ".sandbox",
      ".sandbox-data.json",
    ]),
  );
  const modules = path.join(project, "node_modules");
  await mkdir(path.join(modules, ".bin"), { recursive: true });
  const { stdout: packed } = await run(
    "npm",
    ["pack", "--ignore-scripts", "--json", "--pack-destination", dir],
    {
      cwd: repoRoot,
      maxBuffer: 1 << 24,
    },
  );
  const tarball = path.join(dir, (JSON.parse(packed) as { filename: string }[])[0]!.filename);
  await run("tar", ["-xzf", tarball, "-C", dir]);
  await rename(path.join(dir, "package"), path.join(modules, "bothost"));
  await symlink(path.join(repoRoot, "node_modules"), path.join(modules, "bothost", "node_modules"), "dir");
  for (const dependency of ["vitest", "zod"]) {
    await symlink(path.join(repoRoot, "node_modules", dependency), path.join(modules, dependency), "dir");
  }
  await symlink("../bothost/dist/cli/main.js", path.join(modules, ".bin", "bothost"));
  await chmod(path.join(modules, "bothost", "dist", "cli", "main.js"), 0o755); // as npm does for a bin

  // The project's README links only to what is there once bothost is installed (it is not on the registry).
  const readme = await readFile(path.join(project, "README.md"), "utf8");
  const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
  expect(links.length).toBeGreaterThan(0);
  for (const link of links) expect(existsSync(path.join(project, link)), link).toBe(true);

  // What `npx bothost check` runs: the installed package's bin.
  const manifest = JSON.parse(await readFile(path.join(project, "package.json"), "utf8"));
  const ours = JSON.parse(await readFile(path.join(repoRoot, "package.json"), "utf8"));
  expect(manifest.dependencies.zod).toBe(ours.dependencies.zod);
  // The Node.js versions bothost supports, which the project's vitest (and its vite) accept too.
  expect(manifest.engines).toEqual({ node: "^20.19.0 || ^22.12.0 || >=24" });
  expect(manifest.engines).toEqual(ours.engines);
  // bothost's overrides, repeated: a lock resolved on Node 22 or 24 (strip-json-comments 5.1,
  // which asks for Node 22) would otherwise make `npm ci` on Node 20 warn EBADENGINE.
  expect(manifest.overrides).toEqual(ours.overrides);
  expect(manifest.overrides["pino-pretty"]).toEqual({ "strip-json-comments": "~5.0.3" });
  // The ones getting-started.md tells a project that did not come from init to copy.
  const guide = await readFile(path.join(repoRoot, "docs/guide/getting-started.md"), "utf8");
  const shown = /```json\n"overrides": (\{[\s\S]*?\n\})\n```/.exec(guide)?.[1];
  expect(JSON.parse(shown ?? "null")).toEqual(ours.overrides);
  const check = await run(path.join(modules, ".bin", "bothost"), ["check"], { cwd: project });
  expect(check.stdout).toMatch(/hello/);

  const tests = await run(process.execPath, [path.join(repoRoot, "node_modules/vitest/vitest.mjs"), "run"], {
    cwd: project,
    env: { ...process.env, CI: "1", NO_COLOR: "1", FORCE_COLOR: undefined },
  });
  // The template's three tests: a command, a refused command, a reminder by the sandbox clock.
  expect(tests.stdout + tests.stderr).toMatch(/Tests {2}3 passed \(3\)/);
}, 60_000);

it("refuses a folder that is not empty unless --force, without a stack trace", async () => {
  const busy = path.join(dir, "busy");
  await mkdir(busy);
  await writeFile(path.join(busy, "notes.txt"), "mine\n");
  const refused = await runCli(["init", busy]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("is not empty (notes.txt). Choose an empty folder, or add --force");
  expect(hasStackTrace(refused.stderr)).toBe(false);
  expect((await runCli(["init", busy, "--force"])).code).toBe(0);
  expect(await readdir(busy)).toContain("notes.txt");
});

it("refuses a path that is a file, or lies under one, in one line (exit 2, no stack trace)", async () => {
  const file = path.join(dir, "a-file");
  await writeFile(file, "mine\n");
  for (const [target, said] of [
    [file, `${file} is a file`],
    [path.join(file, "sub"), `${file} is a file, not a folder`],
  ] as const) {
    const refused = await runCli(["init", target]);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 2,
      stderr: `bothost init: ${said}: choose a folder (a new one, or an empty one).\n`,
    });
  }
});

it("a folder that cannot be written is one line naming it and why (exit 1, no stack trace)", async () => {
  const tooLong = path.join(dir, "x".repeat(300));
  const failed = await runCli(["init", tooLong]);
  expect({ code: failed.code, stderr: failed.stderr }).toEqual({
    code: 1,
    stderr: `bothost init: cannot write the project in ${tooLong}: ENAMETOOLONG.\n`,
  });
});
