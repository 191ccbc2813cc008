import { configDefaults, defineConfig } from "vitest/config";
import LongFirstSequencer from "./test/support/long-first-sequencer.ts";

/**
 * Files that run in one module graph per worker (`isolate: false`): they neither stub globals nor
 * leave env vars, timers or spies behind, and no helper they import registers hooks or fixtures
 * at its top level, so importing src/ (fastify, undici, ioredis, the sandbox) once per worker
 * instead of once per file is safe. On 2 shared cores (nice -n 19, load 5 to 13) the import time
 * of these 114 files, summed over workers, fell from 266 s to 65 to 84 s.
 * The rest stay isolated: the daemon and pipeline files run whole daemons in the process; the CLI,
 * end-to-end, cluster, soak and docs files drive child processes; test/sandbox and test/api share
 * one `test.extend` fixture per helper module, set per file with `test.scoped` and checked (the
 * OpenAPI shapes) or closed (connection pools) in the helper's own `afterAll`, which a shared
 * module would run for the first file only; the progress faults find another file's message
 * when they share a worker; and the 10,000-job timer, CPU-bound and near its timeout on a loaded
 * machine, keeps a process of its own.
 */
const SHARED = [
  "architecture",
  "bot",
  "browser",
  "config",
  "demo",
  "effects",
  "events",
  "http",
  "log",
  "package",
  "scheduler",
  "state",
  "support",
  "template",
  "testing",
  "time",
  "webhook",
  "wire",
].map((dir) => `test/${dir}/**/*.test.ts`);
/**
 * `--exclude` on the command line (as .ci/run's Node 24 step uses it): vitest 4.1 applies it to the
 * root config only, not to projects, so it is added to each project's own `exclude` here.
 */
const cliExclude = process.argv.flatMap((arg, i, argv) =>
  arg === "--exclude" && argv[i + 1] ? [argv[i + 1]!] : arg.startsWith("--exclude=") ? [arg.slice(10)] : [],
);
const STILL_ISOLATED = ["test/effects/progress/**/*.test.ts", "test/scheduler/timing/job-timer.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // `expect.poll` waits for a state the test expects to come (a reply posted, a log line): 1 s,
    // vitest's default, is a few HTTP round trips on a loaded 2-core machine. Only a failing
    // wait takes longer.
    expect: { poll: { timeout: 5_000 } },
    // Most files wait on HTTP and child processes, not the CPU: three at a time on a 2-core
    // machine (vitest's default there is one) takes the suite from about 320 s to about 190 s.
    maxWorkers: 3,
    // The files that wait longest start first (test/support/long-first-sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
    // The summary line is the plain "N passed, N failed" form CI reads.
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "isolated",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...SHARED, ...cliExclude],
        },
      },
      { extends: true, test: { name: "isolated-apart", include: STILL_ISOLATED, exclude: cliExclude } },
      {
        extends: true,
        test: {
          name: "shared",
          include: SHARED,
          exclude: [...configDefaults.exclude, ...STILL_ISOLATED, ...cliExclude],
          isolate: false,
        },
      },
    ],
  },
});
