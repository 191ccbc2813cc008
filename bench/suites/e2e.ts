/**
 * End to end, as a user runs it: whole processes, started cold, against a Zulip-like event
 * server (a child process) serving full message events with 200–500 characters of content.
 *
 * (a) a bare undici loop (bench/e2e/bare-loop.mjs): register, poll, JSON.parse, count;
 * (b) `bothost run` (dist/) with one bot whose handler only counts (bench/e2e/counter-bot.mjs).
 *
 * Each is timed from spawning its process to the moment it has seen every event. Rounds alternate
 * which goes first; the first round of each batch size is a warm-up (the OS page cache) and not
 * counted. Reported: the median events/s of each, b/a of the medians, and the spread of b/a.
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

export interface E2eRow {
  batch: number;
  events: number;
  rounds: number;
  bareEventsPerSec: number;
  bothostEventsPerSec: number;
  /** b/a of the medians. */
  ratio: number;
  /** b/a of each round (a and b ran back to back), lowest and highest. */
  ratioMin: number;
  ratioMax: number;
}

const bench = (file: string) => fileURLToPath(new URL(`../e2e/${file}`, import.meta.url));
/** The build under test: `dist/` here, or another build (BENCH_CLI=…/dist/cli/main.js) to compare. */
const cli = process.env.BENCH_CLI ?? path.join(repoRoot, "dist/cli/main.js");

/** Run a process to its "done N" line; resolves the seconds from spawn to exit. */
function timed(args: string[], expected: number): Promise<number> {
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
      if (code === 0 && out.includes(`done ${expected}\n`)) resolve(seconds);
      else
        reject(
          new Error(
            `${path.basename(args.at(-1) ?? "")} exited ${code} without "done ${expected}":\n${out.slice(-2000)}`,
          ),
        );
    });
  });
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
      const bare = () => timed([bench("bare-loop.mjs"), url, String(events)], events);
      let run = 0;
      const bothost = async () => {
        run++;
        const file = path.join(dir, `run-${run}.yaml`);
        await writeDaemonConfig(file, {
          url,
          statePath: path.join(dir, `state-${run}`),
          logLevel: "warn",
          bots: [
            {
              name: "counter",
              module: bench("counter-bot.mjs"),
              email: "counter@bench.example",
              apiKey: "bench-key-0123456789",
            },
          ],
        });
        return timed([cli, "run", "--config", file], events);
      };
      const ratios: number[] = [];
      const a: number[] = [];
      const b: number[] = [];
      for (let r = 0; r <= options.rounds; r++) {
        let ta: number;
        let tb: number;
        if (r % 2 === 0) {
          ta = await bare();
          tb = await bothost();
        } else {
          tb = await bothost();
          ta = await bare();
        }
        if (r === 0) continue; // warm-up
        a.push(events / ta);
        b.push(events / tb);
        ratios.push(ta / tb);
        say(
          `  e2e batch ${batch}: round ${r}: bare ${round(events / ta)} events/s, bothost ${round(events / tb)} events/s, b/a ${round(ta / tb)}`,
        );
      }
      const row: E2eRow = {
        batch,
        events,
        rounds: options.rounds,
        bareEventsPerSec: round(median(a)),
        bothostEventsPerSec: round(median(b)),
        ratio: round(median(b) / median(a)),
        ratioMin: round(Math.min(...ratios)),
        ratioMax: round(Math.max(...ratios)),
      };
      say(`e2e batch ${batch}: b/a ${row.ratio} (rounds ${row.ratioMin}–${row.ratioMax})`);
      rows.push(row);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
