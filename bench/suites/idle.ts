/**
 * Idle bots: what 1,000 bots that receive nothing cost a daemon, against the least any process
 * can spend holding the same 1,000 long polls. Both are whole processes, cold, side by side in
 * the same run and idle over the same window: the real `bothost run` (1,000 echo bots, embedded
 * state) and bench/e2e/bare-idle-loop.mjs (undici, one parked GET /events per queue), against
 * the event server (bench/servers/event-server.ts, its own process) serving no messages: every
 * poll is parked and answered by a heartbeat after 45–55 s, as the real server does. Measured: resident
 * memory after settling, and CPU over the idle window (share of one core). The ratios hold on a
 * loaded machine better than the absolute figures.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { forkChild } from "../lib/child.ts";
import { repoRoot, spawnDaemon, writeDaemonConfig } from "../lib/daemon-process.ts";
import { cpuSeconds, rssBytes } from "../lib/proc.ts";
import { round, sleep } from "../lib/stats.ts";

export interface IdleSide {
  rssMb: number;
  /** CPU over the idle window, as a share of one core. */
  cpuPercent: number;
}

export interface IdleResult {
  bots: number;
  /** From "daemon started" to the window's start. */
  settleSeconds: number;
  /** Whether the window waited for both processes' post-start collections (`--idle-settle reduced`). */
  settledBy: "time" | "reduced";
  idleSeconds: number;
  /** Each parked poll is answered by a heartbeat after about this long. */
  heartbeatSeconds: number;
  bare: IdleSide;
  bothost: IdleSide;
  /** bothost / bare. */
  rssRatio: number;
  cpuRatio: number;
}

const bareLoop = fileURLToPath(new URL("../e2e/bare-idle-loop.mjs", import.meta.url));

/**
 * When each process's post-start collections are over. Some seconds after start-up, once the
 * process allocates little, V8's memory reducer runs one to three full collections ("Mark-Compact
 * (reduce)" in `--trace-gc`, about 0.6 s apart) and gives memory back: a one-time cost of the
 * start, not of idling. Both processes run with `--trace-gc`; their lines are read here.
 */
class PostStartCollections {
  readonly #last = { bare: 0, bothost: 0 };

  /** A line of `who`'s standard output. */
  seen(who: "bare" | "bothost", text: string): void {
    if (text.includes("Mark-Compact (reduce)")) this.#last[who] = performance.now();
  }

  /** Resolves once both ran theirs and QUIET_MS passed without another; false after `timeoutMs`. */
  async over(timeoutMs: number): Promise<boolean> {
    const until = performance.now() + timeoutMs;
    const done = () => {
      const now = performance.now();
      return (["bare", "bothost"] as const).every((w) => this.#last[w] > 0 && now - this.#last[w] > QUIET_MS);
    };
    while (!done() && performance.now() < until) await sleep(250);
    return done();
  }
}

const QUIET_MS = 3000;

export async function runIdle(
  options: {
    bots: number;
    idleSeconds: number;
    settleSeconds: number;
    heartbeatSeconds: number;
    /**
     * "time": the window starts `settleSeconds` after "daemon started". "reduced": also not before
     * both processes' post-start collections are over (see {@link PostStartCollections}), or 150 s.
     */
    settle: "time" | "reduced";
  },
  say: (line: string) => void,
): Promise<IdleResult> {
  const server = await forkChild("servers/event-server.ts", [
    "--total",
    "0",
    "--batch",
    "1",
    "--heartbeat",
    String(options.heartbeatSeconds),
  ]);
  const url = `http://127.0.0.1:${String(server.ready.port)}`;
  const dir = await mkdtemp(join(tmpdir(), "bothost-idle-"));
  const traceGc = options.settle === "reduced" ? ["--trace-gc"] : [];
  const collections = new PostStartCollections();
  const bare = spawn(process.execPath, [...traceGc, bareLoop, url, String(options.bots)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  bare.stdout.on("data", (chunk: Buffer) => collections.seen("bare", chunk.toString()));
  let daemon: ReturnType<typeof spawnDaemon> | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      bare.once("exit", (code) => reject(new Error(`the bare loop exited with ${String(code)}`)));
      bare.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("holding")) resolve();
      });
    });
    const config = join(dir, "bothost.yaml");
    await writeDaemonConfig(config, {
      url,
      state: { path: join(dir, "state") },
      bots: Array.from({ length: options.bots }, (_, i) => ({
        name: `idle-${i}`,
        module: join(repoRoot, "bots/echo.ts"),
        email: `idle-${i}@bench.example`,
        apiKey: "bench-key-0123456789",
      })),
    });
    daemon = spawnDaemon(config, undefined, traceGc);
    daemon.child.stdout?.on("data", (chunk: Buffer) => collections.seen("bothost", chunk.toString()));
    const started = await daemon.waitForLine((l) => l.msg === "daemon started", 600_000);
    if (started.started !== options.bots) throw new Error(`only ${String(started.started)} bots started`);
    const startedAt = performance.now();
    await sleep(options.settleSeconds * 1000);
    if (options.settle === "reduced") {
      const over = await collections.over(150_000 - options.settleSeconds * 1000);
      if (!over) say("  idle: the post-start collections were not seen within 150 s; measuring anyway");
    }
    const settleSeconds = round((performance.now() - startedAt) / 1000);
    const pids = { bare: bare.pid ?? -1, bothost: daemon.pid };
    const cpuBefore = {
      bare: cpuSeconds(pids.bare) ?? Number.NaN,
      bothost: cpuSeconds(pids.bothost) ?? Number.NaN,
    };
    const from = performance.now();
    await sleep(options.idleSeconds * 1000);
    const seconds = (performance.now() - from) / 1000;
    const side = (who: "bare" | "bothost"): IdleSide => ({
      rssMb: round((rssBytes(pids[who]) ?? Number.NaN) / 2 ** 20, 4),
      cpuPercent: round((100 * ((cpuSeconds(pids[who]) ?? Number.NaN) - cpuBefore[who])) / seconds, 3),
    });
    const result: IdleResult = {
      bots: options.bots,
      settleSeconds,
      settledBy: options.settle,
      heartbeatSeconds: options.heartbeatSeconds,
      idleSeconds: round(seconds),
      bare: side("bare"),
      bothost: side("bothost"),
      rssRatio: 0,
      cpuRatio: 0,
    };
    result.rssRatio = round(result.bothost.rssMb / result.bare.rssMb, 2);
    result.cpuRatio = round(result.bothost.cpuPercent / result.bare.cpuPercent, 2);
    say(
      `  idle: ${options.bots} bots, RSS bothost ${result.bothost.rssMb} MB vs bare ${result.bare.rssMb} MB ` +
        `(${result.rssRatio}×), CPU ${result.bothost.cpuPercent}% vs ${result.bare.cpuPercent}% (${result.cpuRatio}×) over ${result.idleSeconds} s`,
    );
    return result;
  } finally {
    daemon?.child.kill("SIGKILL");
    bare.kill("SIGKILL");
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
