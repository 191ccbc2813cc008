/**
 * End to end, as a user runs it: whole processes, started cold, against a Zulip-like event
 * server (a child process) serving full message events with 200–500 characters of content.
 *
 * (a) a bare undici loop (bench/e2e/bare-loop.mjs): register, poll, JSON.parse, count;
 * (b) `bothost run` (dist/) with one bot whose handler only counts (bench/e2e/counter-bot.mjs);
 * (c) the same with a bot that has commands before its counting handler (bench/e2e/command-bot.mjs);
 * (d) with BENCH_CLI_BASELINE set, another build's `bothost run` with the counting bot.
 *
 * Each is timed from spawning its process to the moment it has seen every event. Rounds rotate
 * which goes first; the first round of each batch size is a warm-up (the OS page cache) and not
 * counted. Reported: the median events/s of each, each contender's median over the bare loop's,
 * and the spread of that ratio over the rounds.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { forkChild } from "../lib/child.ts";
import { repoRoot, writeDaemonConfig } from "../lib/daemon-process.ts";
import { median, round } from "../lib/stats.ts";

export interface E2eOptions {
  rounds: number;
  /** Events per round for each batch size (events per poll). */
  sizes: { batch: number; events: number }[];
}

/** One `bothost run` contender beside the bare loop, as b/a. */
export interface E2eContender {
  /** What ran: "bothost run", "bothost run, command bot", or "baseline build". */
  name: string;
  eventsPerSec: number;
  /** Median CPU time of its process (user + system) until it had seen every event. */
  cpuMs: number;
  /** The bare loop's median CPU time over its own: steadier than wall time on a shared machine. */
  cpuRatio: number;
  /** Its median events/s over the bare loop's. */
  ratio: number;
  /** Its b/a in each round (it and the bare loop ran in the same round), lowest and highest. */
  ratioMin: number;
  ratioMax: number;
}

export interface E2eRow {
  batch: number;
  events: number;
  rounds: number;
  bareEventsPerSec: number;
  bothostEventsPerSec: number;
  /** The bare loop's median CPU time. */
  bareCpuMs: number;
  /** b/a of the medians. */
  ratio: number;
  /** b/a of each round (a and b ran back to back), lowest and highest. */
  ratioMin: number;
  ratioMax: number;
  /** bothost run's CPU time, as {@link E2eContender}. */
  cpuMs: number;
  cpuRatio: number;
  /** The same for the command bot and, with BENCH_CLI_BASELINE, another build. */
  others: E2eContender[];
}

const bench = (file: string) => fileURLToPath(new URL(`../e2e/${file}`, import.meta.url));
/** The build under test: `dist/` here, or another build (BENCH_CLI=…/dist/cli/main.js) to compare. */
const cli = process.env.BENCH_CLI ?? path.join(repoRoot, "dist/cli/main.js");
/** Another build run beside it in the same rounds (BENCH_CLI_BASELINE=…/dist/cli/main.js). */
const baseline = process.env.BENCH_CLI_BASELINE;

interface Timed {
  /** From spawn to exit. */
  seconds: number;
  /** The process's own CPU time (user + system) when it had seen every event. */
  cpuMs: number;
}

/** Run a process to its "done N" line; resolves the seconds from spawn to exit, and its CPU time. */
function timed(args: string[], expected: number): Promise<Timed> {
  const env = { ...process.env, BENCH_EVENTS: String(expected) };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      const seconds = (performance.now() - started) / 1000;
      const cpu = /^cpu (\d+)$/m.exec(out);
      if (code === 0 && out.includes(`done ${expected}\n`) && cpu)
        resolve({ seconds, cpuMs: Number(cpu[1]) / 1000 });
      else
        reject(
          new Error(
            `${path.basename(args.at(-1) ?? "")} exited ${code} without "done ${expected}":\n${out.slice(-2000)}`,
          ),
        );
    });
  });
}

interface Runner {
  name: string;
  run(): Promise<Timed>;
}

export async function runE2e(options: E2eOptions, say: (line: string) => void): Promise<E2eRow[]> {
  const rows: E2eRow[] = [];
  for (const { batch, events } of options.sizes) {
    const server = await forkChild("servers/event-server.ts", [
      "--total",
      String(events),
      "--batch",
      String(batch),
      "--long",
    ]);
    const url = `http://127.0.0.1:${server.ready.port as number}`;
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-e2e-bench-"));
    try {
      let run = 0;
      const daemon = (name: string, bin: string, bot: string): Runner => ({
        name,
        run: async () => {
          run++;
          const file = path.join(dir, `run-${run}.yaml`);
          await writeDaemonConfig(file, {
            url,
            state: { path: path.join(dir, `state-${run}`) },
            logLevel: "warn",
            bots: [
              {
                name: "counter",
                module: bench(bot),
                email: "counter@bench.example",
                apiKey: "bench-key-0123456789",
              },
            ],
          });
          return timed([bin, "run", "--config", file], events);
        },
      });
      const bare: Runner = {
        name: "bare",
        run: () => timed([bench("bare-loop.mjs"), url, String(events)], events),
      };
      const contenders = [
        daemon("bothost run", cli, "counter-bot.mjs"),
        daemon("bothost run, command bot", cli, "command-bot.mjs"),
        ...(baseline ? [daemon("baseline build", baseline, "counter-bot.mjs")] : []),
      ];
      const all = [bare, ...contenders];
      const seconds = new Map<Runner, number[]>(all.map((r) => [r, []]));
      const cpu = new Map<Runner, number[]>(all.map((r) => [r, []]));
      for (let r = 0; r <= options.rounds; r++) {
        // Each round rotates which goes first, so no contender always follows the same one.
        const order = all.map((_, i) => all[(i + r) % all.length] as Runner);
        const took = new Map<Runner, Timed>();
        for (const runner of order) took.set(runner, await runner.run());
        if (r === 0) continue; // warm-up
        for (const [runner, t] of took) {
          seconds.get(runner)?.push(t.seconds);
          cpu.get(runner)?.push(t.cpuMs);
        }
        say(
          `  e2e batch ${batch}: round ${r}: ${all.map((x) => `${x.name} ${round(events / (took.get(x) as Timed).seconds)}`).join(", ")} events/s`,
        );
      }
      const bareTimes = seconds.get(bare) as number[];
      const bareRate = events / median(bareTimes);
      const bareCpu = median(cpu.get(bare) as number[]);
      const versus = (runner: Runner): E2eContender => {
        const times = seconds.get(runner) as number[];
        const perRound = times.map((t, i) => (bareTimes[i] as number) / t);
        const cpuMs = median(cpu.get(runner) as number[]);
        return {
          name: runner.name,
          cpuMs: round(cpuMs),
          cpuRatio: round(bareCpu / cpuMs),
          eventsPerSec: round(events / median(times)),
          ratio: round(median(bareTimes) / median(times)),
          ratioMin: round(Math.min(...perRound)),
          ratioMax: round(Math.max(...perRound)),
        };
      };
      const [main, ...others] = contenders.map(versus) as [E2eContender, ...E2eContender[]];
      const row: E2eRow = {
        batch,
        events,
        rounds: options.rounds,
        bareEventsPerSec: round(bareRate),
        bareCpuMs: round(bareCpu),
        bothostEventsPerSec: main.eventsPerSec,
        ratio: main.ratio,
        ratioMin: main.ratioMin,
        ratioMax: main.ratioMax,
        cpuMs: main.cpuMs,
        cpuRatio: main.cpuRatio,
        others,
      };
      for (const c of [main, ...others])
        say(
          `e2e batch ${batch}: ${c.name} b/a ${c.ratio} (rounds ${c.ratioMin}–${c.ratioMax}), CPU ${c.cpuMs} ms against ${round(bareCpu)}, b/a ${c.cpuRatio}`,
        );
      rows.push(row);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
