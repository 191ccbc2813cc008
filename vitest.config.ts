import { defineConfig } from "vitest/config";
import LongFirstSequencer from "./test/support/long-first-sequencer.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Most files wait on HTTP and child processes, not the CPU: three at a time on a 2-core
    // machine (vitest's default there is one) takes the suite from about 320 s to about 190 s.
    maxWorkers: 3,
    // The files that wait longest start first (test/support/long-first-sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
    // The summary line is the plain "N passed, N failed" form CI reads.
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
