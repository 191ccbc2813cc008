/**
 * End to end against a server that behaves like the real queue (bench/servers/queue-server.ts):
 * events arrive at a sustained rate or in one burst, a poll takes everything waiting, and the
 * account's limits hold. Whole processes, started cold, each row beside two bare loops in the
 * same round (bench/e2e/bare-queue-loop.mjs): (a) unpaced, a poll as soon as the last is answered
 * (the floor of CPU per event; the bench's server exempts it, a real one would refuse it), and
 * (p) paced by the budget as bothost is (the fair reference for lag); (b) `bothost run` with
 * bench/e2e/queue-bot.mjs, state on disk, logs at warn; with BENCH_CLI_BASELINE, (d) another
 * build's `bothost run` in the same rounds (the A/B of a change to the hot path).
 *
 * Per contender: CPU per event (its process's CPU time, every thread, from the moment the server
 * starts producing, the contender parked and waiting, to its last event handled, over the events), lag of each event (from its production on the server to its handler,
 * p50/p99), calls to the event-queue bucket (total and the busiest sliding minute), 429s, and for
 * the burst the time from the burst to its last event; and as each process measured itself, the
 * time and CPU per event from its first event handled to its last (for a burst: dispatching the
 * answer once parsed). Medians over the rounds; b/a and b/p of each round (the processes ran
 * back to back), median, lowest and highest.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { forkChild } from "../lib/child.ts";
import { repoRoot, writeDaemonConfig } from "../lib/daemon-process.ts";
import { median, percentile, round } from "../lib/stats.ts";

export interface QueueLoad {
  /** "sustained 1000/s" or "burst 20000". */
  name: string;
  rate: number;
  seconds: number;
  burst: number;
  /** bench/e2e/queue-bot.mjs's handler (BENCH_HANDLER): sync (default), async, or state. */
  handler?: "sync" | "async" | "state";
}

interface Measured {
  cpuUsPerEvent: number;
  lagP50Ms: number;
  lagP99Ms: number;
  /** From the first event produced to the last handled. */
  allHandledMs: number;
  polls: number;
  busiestMinutePolls: number;
  refused: number;
  largestAnswer: number;
  /**
   * From the process's first event handled to its last, as it measured them: the time, and its
   * CPU time (all threads) per event. For a burst, the events' dispatch once the answer is parsed.
   */
  dispatchMs: number;
  dispatchCpuUsPerEvent: number;
}

export interface QueueRow {
  load: QueueLoad;
  rounds: number;
  /** Medians over the rounds, per contender: bare (unpaced), paced (bare, paced), bothost. */
  contenders: Record<string, Measured>;
  /** bothost over the unpaced bare loop: CPU per event and time to handle all (median, spread). */
  cpuVsBare: { median: number; min: number; max: number };
  timeVsBare: { median: number; min: number; max: number };
  /** bothost over the paced bare loop. */
  cpuVsPaced: { median: number; min: number; max: number };
  lagP99VsPacedMs: number;
  /** bothost over the unpaced bare loop, first event handled to last: time and CPU per event. */
  dispatchVsBare: {
    time: { median: number; min: number; max: number };
    cpu: { median: number; min: number; max: number };
  };
  /** With BENCH_CLI_BASELINE: that build over the unpaced bare loop, as above. */
  baselineVsBare?: {
    cpu: { median: number; min: number; max: number };
    time: { median: number; min: number; max: number };
    dispatchCpu: { median: number; min: number; max: number };
  };
}

const bench = (file: string) => fileURLToPath(new URL(`../e2e/${file}`, import.meta.url));
const cli = process.env.BENCH_CLI ?? path.join(repoRoot, "dist/cli/main.js");
/** Another build run beside it in the same rounds (BENCH_CLI_BASELINE=…/dist/cli/main.js). */
const baselineCli = process.env.BENCH_CLI_BASELINE;

interface Outcome {
  /** CPU time of the process (all its threads) from the first event produced to its last handled. */
  cpuUs: number;
  times: Float64Array;
  /** The process's own "dispatch MS CPU_US" line: first event handled to last. */
  dispatch: { ms: number; cpuUs: number };
}

/** CPU time of a process so far, in µs: every thread's time on a CPU (ns in schedstat). */
function cpuOf(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return ns / 1000;
}

/**
 * Run a contender until it prints "done N"; its CPU time is read when the server is about to
 * produce (`started`, set by the caller) and when it is done, then it is killed.
 */
function runProcess(
  args: string[],
  env: Record<string, string>,
  events: number,
  onSpawn: (pid: number) => void,
  startCpu: () => number | undefined,
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    onSpawn(child.pid ?? -1);
    let out = "";
    let endCpu: number | undefined;
    const take = (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (endCpu === undefined && out.includes(`done ${events}\n`)) {
        endCpu = cpuOf(child.pid ?? -1);
        child.kill("SIGKILL");
      }
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.once("error", reject);
    child.once("exit", (code) => {
      const begin = startCpu();
      if (endCpu === undefined || begin === undefined) {
        reject(
          new Error(
            `${path.basename(args[0] ?? "")} exited ${code} without "done ${events}":\n${out.slice(-2000)}`,
          ),
        );
        return;
      }
      const cpuUs = endCpu - begin;
      const [, ms, cpu] = /dispatch ([\d.]+) (\d+)\n/.exec(out) ?? [];
      const dispatch = { ms: Number(ms), cpuUs: Number(cpu) };
      readFile(env.BENCH_TIMES as string).then(
        (buf) =>
          resolve({
            cpuUs,
            times: new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8),
            dispatch,
          }),
        reject,
      );
    });
  });
}

interface ServerResult {
  producedAt: number[];
  accounts: Record<
    string,
    { calls: number; refused: number; polls: number; largest: number; busiestMinute: { events: number } }
  >;
}

const spread = (values: number[]) => ({
  median: round(median(values)),
  min: round(Math.min(...values)),
  max: round(Math.max(...values)),
});

export async function runQueue(
  options: { loads: QueueLoad[]; rounds: number },
  say: (line: string) => void,
): Promise<QueueRow[]> {
  const capacity = Math.max(...options.loads.map((l) => l.burst + Math.ceil(l.rate * l.seconds)));
  const server = await forkChild("servers/queue-server.ts", ["--events", String(capacity)]);
  const url = `http://127.0.0.1:${server.ready.port as number}`;
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-queue-bench-"));
  let runs = 0;
  // The contender running now, and its CPU time when the server was about to produce.
  let pid = -1;
  let cpuAtStart: number | undefined;
  server.process.on("message", (msg: { type?: string }) => {
    if (msg.type !== "parked") return;
    cpuAtStart = cpuOf(pid);
    void server.call("go");
  });
  const hooks = [
    (p: number) => {
      pid = p;
      cpuAtStart = undefined;
    },
    () => cpuAtStart,
  ] as const;
  /** `bothost run` of the build at `cliPath`, with bench/e2e/queue-bot.mjs. */
  const daemon = (name: string, email: string, cliPath: string) => ({
    name,
    email,
    start: async (events: number, times: string, handler: string) => {
      const file = path.join(dir, `run-${runs}.yaml`);
      await writeDaemonConfig(file, {
        url,
        state: { path: path.join(dir, `state-${runs}`) },
        logLevel: "warn",
        bots: [{ name: "queue", module: bench("queue-bot.mjs"), email, apiKey: "bench-key-0123456789" }],
      });
      return runProcess(
        [cliPath, "run", "--config", file],
        { BENCH_TIMES: times, BENCH_EVENTS: String(events), BENCH_HANDLER: handler },
        events,
        ...hooks,
      );
    },
  });
  const contenders: {
    name: string;
    email: string;
    start(events: number, times: string, handler: string): Promise<Outcome>;
  }[] = [
    {
      name: "bare",
      email: "unlimited@bench.example",
      start: (events, times) =>
        runProcess(
          [bench("bare-queue-loop.mjs"), url, "unpaced", String(events), times],
          { BENCH_TIMES: times },
          events,
          ...hooks,
        ),
    },
    {
      name: "paced",
      email: "paced@bench.example",
      start: (events, times) =>
        runProcess(
          [bench("bare-queue-loop.mjs"), url, "paced", String(events), times],
          { BENCH_TIMES: times },
          events,
          ...hooks,
        ),
    },
    daemon("bothost", "bothost@bench.example", cli),
    ...(baselineCli === undefined ? [] : [daemon("baseline", "baseline@bench.example", baselineCli)]),
  ];

  async function measure(load: QueueLoad, contender: (typeof contenders)[number]): Promise<Measured> {
    runs++;
    const events = load.burst + Math.ceil(load.rate * load.seconds);
    await server.call("arm", { rate: load.rate, seconds: load.seconds, burst: load.burst });
    const times = path.join(dir, `times-${runs}`);
    const outcome = await contender.start(events, times, load.handler ?? "sync");
    const result = await server.call<ServerResult>("result");
    const lags: number[] = [];
    let lastHandled = 0;
    for (let k = 0; k < events; k++) {
      const handled = outcome.times[k] as number;
      lags.push(handled - (result.producedAt[k] as number));
      if (handled > lastHandled) lastHandled = handled;
    }
    const account = result.accounts[contender.email];
    return {
      cpuUsPerEvent: outcome.cpuUs / events,
      lagP50Ms: percentile(lags, 50),
      lagP99Ms: percentile(lags, 99),
      allHandledMs: lastHandled - (result.producedAt[0] as number),
      polls: account?.polls ?? 0,
      busiestMinutePolls: account?.busiestMinute.events ?? 0,
      refused: account?.refused ?? 0,
      largestAnswer: account?.largest ?? 0,
      dispatchMs: outcome.dispatch.ms,
      dispatchCpuUsPerEvent: outcome.dispatch.cpuUs / events,
    };
  }

  const rows: QueueRow[] = [];
  try {
    // One cold run of each first: the OS page cache for node, dist/ and undici.
    for (const c of contenders) await measure({ name: "warm-up", rate: 0, seconds: 0, burst: 1000 }, c);
    for (const load of options.loads) {
      const all = new Map(contenders.map((c) => [c.name, [] as Measured[]]));
      for (let r = 0; r < options.rounds; r++) {
        const order = contenders.map(
          (_, i) => contenders[(i + r) % contenders.length] as (typeof contenders)[number],
        );
        for (const c of order) all.get(c.name)?.push(await measure(load, c));
        const m = (name: string) => all.get(name)?.at(-1) as Measured;
        say(
          `  queue ${load.name}: round ${r + 1}: ${contenders
            .map(
              (c) =>
                `${c.name} ${round(m(c.name).cpuUsPerEvent)} µs/event, lag p99 ${round(m(c.name).lagP99Ms)} ms, ${m(c.name).polls} polls`,
            )
            .join("; ")}`,
        );
      }
      const per = (name: string) => all.get(name) as Measured[];
      const med = (name: string): Measured => {
        const list = per(name);
        const pick = (f: (x: Measured) => number) => round(median(list.map(f)));
        return {
          cpuUsPerEvent: pick((x) => x.cpuUsPerEvent),
          lagP50Ms: pick((x) => x.lagP50Ms),
          lagP99Ms: pick((x) => x.lagP99Ms),
          allHandledMs: pick((x) => x.allHandledMs),
          polls: pick((x) => x.polls),
          busiestMinutePolls: pick((x) => x.busiestMinutePolls),
          refused: Math.max(...list.map((x) => x.refused)),
          largestAnswer: pick((x) => x.largestAnswer),
          dispatchMs: pick((x) => x.dispatchMs),
          dispatchCpuUsPerEvent: pick((x) => x.dispatchCpuUsPerEvent),
        };
      };
      const ratio = (b: string, a: string, f: (x: Measured) => number) =>
        spread(per(b).map((x, i) => f(x) / f(per(a)[i] as Measured)));
      const contendersMedian = Object.fromEntries(contenders.map((c) => [c.name, med(c.name)]));
      const row: QueueRow = {
        load,
        rounds: options.rounds,
        contenders: contendersMedian,
        cpuVsBare: ratio("bothost", "bare", (x) => x.cpuUsPerEvent),
        timeVsBare: ratio("bothost", "bare", (x) => x.allHandledMs),
        cpuVsPaced: ratio("bothost", "paced", (x) => x.cpuUsPerEvent),
        dispatchVsBare: {
          time: ratio("bothost", "bare", (x) => x.dispatchMs),
          cpu: ratio("bothost", "bare", (x) => x.dispatchCpuUsPerEvent),
        },
        ...(all.has("baseline")
          ? {
              baselineVsBare: {
                cpu: ratio("baseline", "bare", (x) => x.cpuUsPerEvent),
                time: ratio("baseline", "bare", (x) => x.allHandledMs),
                dispatchCpu: ratio("baseline", "bare", (x) => x.dispatchCpuUsPerEvent),
              },
            }
          : {}),
        lagP99VsPacedMs: round(
          median(per("bothost").map((x, i) => x.lagP99Ms - (per("paced")[i] as Measured).lagP99Ms)),
        ),
      };
      const b = contendersMedian.bothost as Measured;
      const a = contendersMedian.bare as Measured;
      say(
        `queue ${load.name}: CPU/event b/a ${row.cpuVsBare.median} (${row.cpuVsBare.min}–${row.cpuVsBare.max}), b/p ${row.cpuVsPaced.median}; all handled b/a ${row.timeVsBare.median}; lag p99 b ${b.lagP99Ms} ms, b − p ${row.lagP99VsPacedMs} ms; ${b.refused} × 429; first to last handled: a ${a.dispatchMs} / b ${b.dispatchMs} ms, CPU a ${a.dispatchCpuUsPerEvent} / b ${b.dispatchCpuUsPerEvent} µs/event`,
      );
      rows.push(row);
    }
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}
