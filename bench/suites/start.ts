/**
 * A daemon's start, as an operator's `bothost run` (or a restart after a crash) pays it: whole
 * processes, cold (a new state folder each), `bothost run` with one TypeScript bot
 * (`bots/echo.ts`) against the sandbox in this process, from spawning to its "daemon started" log
 * line. Measured: the wall time to that line and the process's CPU time then (utime + stime from
 * /proc). With BENCH_CLI_BASELINE=<other>/dist/cli/main.js, that build starts in the same rounds,
 * the order alternating; medians, and b/a of each round's pair.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { repoRoot, spawnDaemon, writeDaemonConfig } from "../lib/daemon-process.ts";
import { cpuSeconds } from "../lib/proc.ts";
import { median, round } from "../lib/stats.ts";

export interface StartRow {
  build: string;
  wallMs: number;
  cpuMs: number;
}

export interface StartResult {
  rounds: number;
  rows: StartRow[];
  /** With a baseline: this build's over the baseline's, the median of the rounds and their range. */
  cpuRatio?: { median: number; low: number; high: number };
  wallRatio?: { median: number; low: number; high: number };
}

const BOT = "echo-bot@sandbox.example";

export async function runStart(
  options: { rounds: number },
  say: (line: string) => void,
): Promise<StartResult> {
  const baseline = process.env.BENCH_CLI_BASELINE;
  const builds: { name: string; cli: string | undefined }[] = [{ name: "this build", cli: undefined }];
  if (baseline) builds.push({ name: `baseline ${baseline}`, cli: baseline });
  const sandbox = await startSandbox({
    org: {
      realm: { name: "Start", host: "sandbox.example" },
      users: [{ email: "owner@sandbox.example", full_name: "Owner", role: "owner" }],
      bots: [{ email: BOT, full_name: "Echo", type: "generic", owner: "owner@sandbox.example" }],
      channels: [{ name: "general", subscribers: ["owner@sandbox.example", BOT] }],
    },
  });
  const samples = builds.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  try {
    // Round 0 warms the OS's file cache for both builds and is not counted.
    for (let r = 0; r <= options.rounds; r++) {
      const order = r % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => i).reverse();
      for (const i of order) {
        const dir = await mkdtemp(join(tmpdir(), "bothost-bench-start-"));
        try {
          const file = join(dir, "bothost.yaml");
          // Each build runs the echo bot of its own tree: the bot's `import … from "bothost"` resolves
          // to the package it is in, so a baseline run on this tree's bot would load both builds.
          const tree = builds[i]!.cli ? resolve(builds[i]!.cli!, "../../..") : repoRoot;
          const bot = { name: "echo", module: join(tree, "bots/echo.ts"), email: BOT };
          await writeDaemonConfig(file, {
            url: sandbox.url,
            state: { path: join(dir, "state") },
            bots: [{ ...bot, apiKey: sandbox.control.apiKeyOf(BOT) }],
          });
          const spawned = performance.now();
          const daemon = spawnDaemon(file, undefined, [], builds[i]!.cli);
          await daemon.waitForLine((line) => line.msg === "daemon started", 60_000);
          const wall = performance.now() - spawned;
          const cpu = (cpuSeconds(daemon.pid) ?? Number.NaN) * 1000;
          daemon.child.kill("SIGTERM");
          await daemon.exited;
          if (r > 0) {
            samples[i]!.wall.push(wall);
            samples[i]!.cpu.push(cpu);
          }
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    await sandbox.stop();
  }
  const rows = builds.map((b, i) => ({
    build: b.name,
    wallMs: Math.round(median(samples[i]!.wall)),
    cpuMs: Math.round(median(samples[i]!.cpu)),
  }));
  for (const row of rows)
    say(`  start: ${row.build}: ${row.wallMs} ms to "daemon started", CPU ${row.cpuMs} ms`);
  const result: StartResult = { rounds: options.rounds, rows };
  if (baseline) {
    const ratios = (key: "wall" | "cpu") => {
      const each = samples[0]![key].map((v, r) => v / samples[1]![key][r]!);
      return { median: round(median(each)), low: round(Math.min(...each)), high: round(Math.max(...each)) };
    };
    result.cpuRatio = ratios("cpu");
    result.wallRatio = ratios("wall");
    say(
      `  start: this build over the baseline: CPU ${result.cpuRatio.median} (${result.cpuRatio.low}–${result.cpuRatio.high}), ` +
        `wall ${result.wallRatio.median} (${result.wallRatio.low}–${result.wallRatio.high})`,
    );
  }
  return result;
}
