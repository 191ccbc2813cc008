/**
 * `bothost init` as a newcomer runs it: the project it writes passes `bothost check` and its own
 * tests unedited. The package is linked into the project's node_modules (as an install would put
 * it; no network), with vitest from ours.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt, cliPath, hasStackTrace, repoRoot, runCli } from "../e2e/_support/cli.ts";

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
  expect(created.stdout).toContain("npm install && npm start");
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
  await mkdir(path.join(project, "node_modules"));
  await symlink(repoRoot, path.join(project, "node_modules", "bothost"), "dir");
  await symlink(
    path.join(repoRoot, "node_modules", "vitest"),
    path.join(project, "node_modules", "vitest"),
    "dir",
  );

  const check = await run(process.execPath, [cliPath, "check"], { cwd: project });
  expect(check.stdout).toMatch(/hello/);

  const tests = await run(process.execPath, [path.join(repoRoot, "node_modules/vitest/vitest.mjs"), "run"], {
    cwd: project,
    env: { ...process.env, CI: "1" },
  });
  expect(tests.stdout + tests.stderr).toMatch(/1 passed/);
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
