import { configDefaults, defineConfig } from "vitest/config";
import LongFirstSequencer from "./test/support/long-first-sequencer.ts";

/**
 * Most files run in one module graph per worker (`isolate: false`): they neither stub globals nor
 * leave env vars, timers or spies behind, and no helper they import registers hooks or fixtures at
 * its top level, so src/ (fastify, undici, ioredis, pino, zod, the sandbox) is imported once per
 * worker instead of once per file: a fresh graph per file was most of the suite's CPU time on 2
 * cores. The files that run whole daemons in the process (test/daemon, test/pipeline) share too:
 * each daemon, sandbox and store a test makes is its own object, closed by the test.
 * test/sandbox and test/api share as well, with a setup file run before each of their files
 * (test/support/per-file.ts): their fixtures' options, the OpenAPI shape check of the responses a
 * file recorded and the connection pools are per file.
 * These stay isolated: the progress faults find another file's message when they share a worker;
 * and the 10,000-job timer, CPU-bound and near its timeout on a loaded machine, keeps a process of
 * its own.
 */
const ISOLATED = ["test/effects/progress/**/*.test.ts", "test/scheduler/timing/job-timer.test.ts"];
const PER_FILE_FIXTURES = ["test/sandbox/**/*.test.ts", "test/api/**/*.test.ts"];
/**
 * `--exclude` on the command line (as .ci/run's Node 24 step uses it): vitest 4.1 applies it to the
 * root config only, not to projects, so it is added to each project's own `exclude` here.
 */
const cliExclude = process.argv.flatMap((arg, i, argv) =>
  arg === "--exclude" && argv[i + 1] ? [argv[i + 1]!] : arg.startsWith("--exclude=") ? [arg.slice(10)] : [],
);

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // `expect.poll` waits for a state the test expects to come (a reply posted, a log line): 1 s,
    // vitest's default, is a few HTTP round trips on a loaded 2-core machine. Only a failing
    // wait takes longer.
    expect: { poll: { timeout: 5_000 } },
    // Many files wait on HTTP and child processes, not the CPU: three at a time on a 2-core
    // machine (vitest's default there is one).
    maxWorkers: 3,
    // The files that wait longest start first (test/support/long-first-sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
    // Every temporary file of the run in one folder, removed at its end (test/support/temp-root.ts).
    globalSetup: ["./test/support/temp-root.ts"],
    // The summary line is the plain "N passed, N failed" form CI reads.
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "isolated",
          include: ISOLATED,
          exclude: [...configDefaults.exclude, ...cliExclude],
        },
      },
      {
        extends: true,
        test: {
          name: "fixtures",
          include: PER_FILE_FIXTURES,
          exclude: [...configDefaults.exclude, ...cliExclude],
          isolate: false,
          setupFiles: ["./test/support/per-file.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...ISOLATED, ...PER_FILE_FIXTURES, ...cliExclude],
          isolate: false,
        },
      },
    ],
  },
});
