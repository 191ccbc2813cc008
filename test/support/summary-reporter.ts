import type { Reporter, SerializedError, TestModule, TestRunEndReason } from "vitest/node";

/** What the closing line counts. */
export interface RunCounts {
  passed: number;
  /** Failed tests + {@link outside} + {@link unhandled}; at least 1 whenever vitest failed. */
  failed: number;
  skipped: number;
  /** Test files and suites that failed outside any test (an import or a hook threw). */
  outside: number;
  /** Errors no test caught (an unhandled rejection, an error event). */
  unhandled: number;
}

export function countRun(
  testModules: ReadonlyArray<TestModule>,
  unhandledErrors: ReadonlyArray<SerializedError>,
  reason: TestRunEndReason,
): RunCounts {
  let passed = 0;
  let failedTests = 0;
  let skipped = 0;
  let outside = 0;
  for (const mod of testModules) {
    let own = mod.errors().length > 0 ? 1 : 0;
    for (const suite of mod.children.allSuites()) if (suite.errors().length > 0) own++;
    let failedHere = 0;
    for (const test of mod.children.allTests()) {
      const state = test.result().state;
      if (state === "passed") passed++;
      else if (state === "failed") failedHere++;
      else skipped++;
    }
    // A failed file with no failed test and no error of its own still failed: count it once.
    if (own === 0 && failedHere === 0 && mod.state() === "failed") own = 1;
    failedTests += failedHere;
    outside += own;
  }
  const unhandled = unhandledErrors.length;
  const counted = failedTests + outside + unhandled;
  const failed = reason === "failed" && counted === 0 ? 1 : counted;
  return { passed, failed, skipped, outside, unhandled };
}

/** A line naming the failures outside tests (when there are any), then `tests: N passed, N failed, N skipped`. */
export function summaryLines(c: RunCounts): string {
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const outside = [
    c.outside > 0
      ? plural(c.outside, "test file or suite", "test files or suites") + " failed outside a test"
      : "",
    c.unhandled > 0 ? plural(c.unhandled, "unhandled error", "unhandled errors") : "",
  ].filter(Boolean);
  const note = outside.length > 0 ? `\nfailed besides tests: ${outside.join("; ")}` : "";
  return `${note}\ntests: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped\n`;
}

/**
 * Prints one closing line in the plain form CI reads: `tests: N passed, N failed, N skipped`.
 * Vitest's own summary is not among the formats CI recognises. Its failed count includes test
 * files that failed outside their tests and unhandled errors, so it is 0 only when vitest passed.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): void {
    process.stdout.write(summaryLines(countRun(testModules, unhandledErrors, reason)));
  }
}
