import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The summary line is the plain "N passed, N failed" form CI reads.
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
