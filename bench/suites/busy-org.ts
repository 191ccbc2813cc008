/**
 * A busy organization: one bot (`bothost run` from dist/, a real daemon process) in a channel
 * with 5 and then 20 messages a second for a simulated hour, pinged every 5 s, against the
 * sandbox with the server's real limits. Both processes run on a clock `speed` times faster than
 * the wall (bench/lib/fast-clock.mjs, preloaded into each), so the hour takes 3600/speed seconds;
 * times below are simulated ones. Reports calls per bucket per minute and hour, 429s and the
 * answer delay (p50/p99/max, and p99 in the first and the last quarter of the hour).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Child, forkChild } from "../lib/child.ts";
import { repoRoot, spawnDaemon, writeDaemonConfig } from "../lib/daemon-process.ts";
import { percentile, round } from "../lib/stats.ts";

const preload = fileURLToPath(new URL("../lib/fast-clock.mjs", import.meta.url));

export interface BusyOrgRow {
  rate: number;
  simulatedSeconds: number;
  speed: number;
  pings: number;
  answered: number;
  responses429: number;
  calls: { events: number; other: number };
  busiestMinute: { events: number; other: number };
  busiestHour: { events: number; other: number };
  answerMs: { p50: number; p99: number; max: number; p99FirstQuarter: number; p99LastQuarter: number };
}

interface HostRun {
  pings: number;
  answered: number;
  delays: { at: number; ms: number }[];
  refused: number;
  calls: { events: number; other: number };
  busiestMinute: { events: number; other: number };
  busiestHour: { events: number; other: number };
}

/** Run `start` with the fast clock preloaded into the processes it starts. */
export async function withFastClock<T>(speed: number, t0: number, start: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  process.env.NODE_OPTIONS = `${saved.NODE_OPTIONS ?? ""} --import ${preload}`.trim();
  process.env.BENCH_CLOCK_SPEED = String(speed);
  process.env.BENCH_CLOCK_T0 = String(t0);
  try {
    return await start();
  } finally {
    for (const key of ["NODE_OPTIONS", "BENCH_CLOCK_SPEED", "BENCH_CLOCK_T0"]) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  }
}

async function oneRate(rate: number, seconds: number, speed: number): Promise<BusyOrgRow> {
  const t0 = Date.now();
  const dir = await mkdtemp(join(tmpdir(), "bothost-busy-"));
  let host: Child | undefined;
  let daemon: ReturnType<typeof spawnDaemon> | undefined;
  try {
    host = await withFastClock(speed, t0, () => forkChild("servers/busy-org-host.ts"));
    const { url, email, apiKey } = host.ready as { url: string; email: string; apiKey: string };
    const config = join(dir, "bothost.yaml");
    await writeDaemonConfig(config, {
      url,
      state: { path: join(dir, "state") },
      bots: [{ name: "busy", module: join(repoRoot, "bench/e2e/ping-bot.mjs"), email, apiKey }],
    });
    daemon = await withFastClock(speed, t0, async () => spawnDaemon(config));
    await daemon.waitForLine((l) => l.msg === "daemon started", 60_000);
    const run = await host.call<HostRun>("run", { rate, seconds, pingEvery: 5 });
    const ms = run.delays.map((d) => d.ms);
    const quarter = (q: number) =>
      percentile(
        run.delays
          .filter((d) => d.at >= (q * seconds * 1000) / 4 && d.at < ((q + 1) * seconds * 1000) / 4)
          .map((d) => d.ms),
        99,
      );
    return {
      rate,
      simulatedSeconds: seconds,
      speed,
      pings: run.pings,
      answered: run.answered,
      responses429: run.refused,
      calls: run.calls,
      busiestMinute: run.busiestMinute,
      busiestHour: run.busiestHour,
      answerMs: {
        p50: round(percentile(ms, 50)),
        p99: round(percentile(ms, 99)),
        max: round(Math.max(...ms)),
        p99FirstQuarter: round(quarter(0)),
        p99LastQuarter: round(quarter(3)),
      },
    };
  } finally {
    daemon?.child.kill("SIGTERM");
    if (daemon) await daemon.exited;
    await host?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The light row's accounts' rule. A ping and its pong's echo are two polls for each contender: 4 a
 * second, over the default 200 a minute. This row measures reaction time while the budget lets a
 * bot poll at once, so both accounts get ten times the server's default rule, as an administrator
 * can give an account, and the daemon's config says so (`rate_limit`: the server reports only the
 * hourly figure). The busy rows keep the default.
 */
const LIGHT_LIMITS = { perMinute: 2_000, perHour: 20_000 };

/** Light traffic, real time: the ping's answer delay, bare loop (a) against `bothost run` (b). */
export interface LightRow {
  pings: number;
  rounds: number;
  /** How the pings arrived: at random times (500 ms apart on average) or on a 500 ms grid. */
  arrivals: "random" | "grid";
  bare: { p50: number; p99: number };
  bothost: { p50: number; p99: number };
  /** b − a of the p99s, in ms. */
  p99DiffMs: number;
  /** A 95% interval for it: rounds (pairs of processes) resampled with replacement. */
  p99DiffInterval: [number, number];
  /** With `byIndex`: each ping's delay by its index within its process, every round, warm-up included. */
  byIndex?: { bare: number[][]; bothost: number[][] };
}

async function light(options: {
  rounds: number;
  count: number;
  everyMs: number;
  warmup: number;
  byIndex: boolean;
  nodeFlags: string[];
  arrivals: "random" | "grid";
}): Promise<LightRow> {
  const host = await forkChild("servers/busy-org-host.ts");
  const ready = host.ready as Record<string, string>;
  const samples = { bare: [] as number[], bothost: [] as number[] };
  const rounds = { bare: [] as number[][], bothost: [] as number[][] };
  try {
    for (let round = 0; round < options.rounds; round++) {
      // One arrival sequence per round, the same for both contenders.
      const seed = options.arrivals === "random" ? Math.floor(Math.random() * 2 ** 32) : undefined;
      for (const who of round % 2 === 0 ? (["bare", "bothost"] as const) : (["bothost", "bare"] as const)) {
        const dir = await mkdtemp(join(tmpdir(), "bothost-light-"));
        let stop: () => Promise<unknown>;
        if (who === "bare") {
          const loop = bareLoop(ready.url!, ready.bareEmail!, ready.bareApiKey!, options.nodeFlags);
          await loop.registered;
          stop = loop.stop;
        } else {
          const config = join(dir, "bothost.yaml");
          await writeDaemonConfig(config, {
            url: ready.url!,
            state: { path: join(dir, "state") },
            logLevel: "info",
            bots: [
              {
                name: "busy",
                module: join(repoRoot, "bench/e2e/ping-bot.mjs"),
                email: ready.email!,
                apiKey: ready.apiKey!,
                rateLimit: LIGHT_LIMITS,
              },
            ],
          });
          const daemon = spawnDaemon(config, undefined, options.nodeFlags);
          await daemon
            .waitForLine((l) => l.msg === "daemon started", 60_000)
            .catch((err) => {
              throw new Error(
                `${(err as Error).message}; its log: ${JSON.stringify(daemon.lines.slice(-5))}`,
              );
            });
          stop = async () => {
            daemon.child.kill("SIGTERM");
            await daemon.exited;
          };
        }
        const delays = await host.call<number[]>("light", {
          count: options.count,
          everyMs: options.everyMs,
          seed,
          limits: LIGHT_LIMITS,
        });
        // The first few include connection set-up in both, and code not yet optimized.
        samples[who].push(...delays.slice(options.warmup));
        rounds[who].push(delays);
        await stop();
        await rm(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await host.stop();
  }
  const stats = (v: number[]) => ({ p50: round(percentile(v, 50)), p99: round(percentile(v, 99)) });
  const bare = stats(samples.bare);
  const bothost = stats(samples.bothost);
  return {
    pings: samples.bare.length,
    rounds: options.rounds,
    arrivals: options.arrivals,
    bare,
    bothost,
    p99DiffMs: round(bothost.p99 - bare.p99),
    p99DiffInterval: p99DiffInterval(
      rounds.bare.map((r) => r.slice(options.warmup)),
      rounds.bothost.map((r) => r.slice(options.warmup)),
    ),
    ...(options.byIndex
      ? {
          byIndex: {
            bare: rounds.bare.map((r) => r.map((v) => round(v))),
            bothost: rounds.bothost.map((r) => r.map((v) => round(v))),
          },
        }
      : {}),
  };
}

/**
 * A 95% interval for b − a at p99 (ms). Each round is one process of each contender, and most of
 * the spread lies between processes, so whole rounds are resampled (the same ones for both, as
 * they shared the arrival times), 2,000 times.
 */
export function p99DiffInterval(bare: number[][], bothost: number[][]): [number, number] {
  const n = Math.min(bare.length, bothost.length);
  const diffs: number[] = [];
  for (let i = 0; i < 2_000; i++) {
    const picked = Array.from({ length: n }, () => Math.floor(Math.random() * n));
    const p99 = (runs: number[][]) =>
      percentile(
        picked.flatMap((r) => runs[r] ?? []),
        99,
      );
    diffs.push(p99(bothost) - p99(bare));
  }
  return [round(percentile(diffs, 2.5)), round(percentile(diffs, 97.5))];
}

/** One line per ping index: mean and max over the rounds, (a) then (b), in ms. */
function byIndexLines(byIndex: NonNullable<LightRow["byIndex"]>, warmup: number): string[] {
  const at = (runs: number[][], i: number) => runs.flatMap((r) => (r[i] === undefined ? [] : [r[i]!]));
  const cell = (v: number[]) =>
    v.length === 0
      ? "-"
      : `${round(v.reduce((a, b) => a + b, 0) / v.length)} / ${round(Math.max(...v))}`.padEnd(14);
  const count = Math.max(...byIndex.bare.map((r) => r.length), ...byIndex.bothost.map((r) => r.length));
  const lines = ["  ping  (a) mean / max   (b) mean / max   (ms; indexes below the warm-up are not counted)"];
  for (let i = 0; i < count; i++)
    lines.push(
      `  ${String(i).padStart(3)}${i < warmup ? "*" : " "}  ${cell(at(byIndex.bare, i))}   ${cell(at(byIndex.bothost, i))}`,
    );
  return lines;
}

function bareLoop(url: string, email: string, apiKey: string, nodeFlags: string[]) {
  const script = fileURLToPath(new URL("../e2e/bare-ping-loop.mjs", import.meta.url));
  const child = spawn(process.execPath, [...nodeFlags, script, url, email, apiKey], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const registered = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("registered")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`bare-ping-loop exited (${code})`)));
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    registered,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

export async function runBusyOrg(
  options: {
    rates: number[];
    seconds: number;
    speed: number;
    lightRounds: number;
    lightPings: number;
    lightWarmup: number;
    /** Print each ping index's delays (mean and max over the rounds). */
    lightByIndex: boolean;
    /** Node flags for both contenders' processes (a diagnosis aid: `--trace-gc`, `--no-memory-reducer`). */
    lightNodeFlags: string[];
    /** `random`: arrival times as a user's messages have them; `grid`: every 500 ms from the start. */
    lightArrivals: "random" | "grid";
  },
  say: (line: string) => void,
): Promise<{ light: LightRow; rows: BusyOrgRow[] }> {
  // A ping every 500 ms: the bare loop's one poll and one send per ping stay within 200 a minute.
  say(
    `light traffic: a ping every 500 ms${options.lightArrivals === "random" ? " on average, at random times" : ", on a grid"}, (a) bare loop / (b) bothost run, alternating …`,
  );
  const lightRow = await light({
    rounds: options.lightRounds,
    count: options.lightPings,
    everyMs: 500,
    warmup: options.lightWarmup,
    byIndex: options.lightByIndex,
    nodeFlags: options.lightNodeFlags,
    arrivals: options.lightArrivals,
  });
  say(
    `  answer delay p50 ${lightRow.bare.p50} / ${lightRow.bothost.p50} ms, p99 ${lightRow.bare.p99} / ${lightRow.bothost.p99} ms (b − a ${lightRow.p99DiffMs} ms, 95% interval ${lightRow.p99DiffInterval.join(" to ")} ms)`,
  );
  if (lightRow.byIndex) for (const line of byIndexLines(lightRow.byIndex, options.lightWarmup)) say(line);
  const rows: BusyOrgRow[] = [];
  for (const rate of options.rates) {
    say(`busy organization: ${rate} messages/s for ${options.seconds} simulated s at ${options.speed}× …`);
    const row = await oneRate(rate, options.seconds, options.speed);
    say(
      `  429s ${row.responses429}; events calls ${row.calls.events} (busiest minute ${row.busiestMinute.events}, hour ${row.busiestHour.events}); ` +
        `other ${row.calls.other} (${row.busiestMinute.other}, ${row.busiestHour.other}); answered ${row.answered}/${row.pings}; ` +
        `delay p50 ${row.answerMs.p50} ms, p99 ${row.answerMs.p99} ms, max ${row.answerMs.max} ms`,
    );
    rows.push(row);
  }
  return { light: lightRow, rows };
}
