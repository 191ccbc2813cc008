/**
 * The closing line CI reads counts every way a run can fail: vitest runs a small project of its own
 * (test/fixtures/summary-reporter) as a subprocess, with a passing and a skipped test, a file
 * that throws while it loads, an afterAll that throws after its test passed, and a rejection
 * nobody handles.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect, test } from "vitest";
import { repoRoot } from "./cli.ts";
import { countRun } from "./summary-reporter.ts";

const vitest = path.join(repoRoot, "node_modules/vitest/vitest.mjs");
const config = path.join(repoRoot, "test/fixtures/summary-reporter/vitest.config.ts");

test("failed files and unhandled errors count as failed, so the line never says 0 failed while vitest failed", async () => {
  const run = await promisify(execFile)(process.execPath, [vitest, "run", "--config", config], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: "1", CI: "1" },
  }).then(
    () => ({ code: 0, stdout: "" }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
  expect(run.code).toBe(1);
  const lines = run.stdout.trimEnd().split("\n").slice(-2);
  expect(lines).toEqual([
    "failed besides tests: 2 test files or suites failed outside a test; 1 unhandled error",
    "tests: 3 passed, 3 failed, 1 skipped",
  ]);
});

test("a run vitest failed for a reason outside every file still counts one failure", () => {
  expect(countRun([], [], "failed")).toMatchObject({ failed: 1, passed: 0 });
  expect(countRun([], [], "passed")).toMatchObject({ failed: 0 });
});
