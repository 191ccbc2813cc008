/**
 * Scale: N bots (default 1,000) in one daemon. The daemon is the real `bothost run` in a
 * subprocess (so its memory is its own), each bot the shipped echo bot with its own account, all
 * against the sandbox in this process with the server's real heartbeat cadence (45–55 s).
 * Measures the time until every queue is registered, the daemon's resident memory, and its CPU
 * while idle.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { repoRoot, spawnDaemon, writeDaemonConfig } from "../lib/daemon-process.ts";
import { cpuSeconds, rssBytes } from "../lib/proc.ts";
import { round, sleep } from "../lib/stats.ts";

export interface ScaleResult {
  bots: number;
  registrationConcurrency: number;
  /** From spawning the process to the daemon's "daemon started" line (every queue registered). */
  startSeconds: number;
  /** From the first bot's registration to the last one's. */
  registrationSeconds: number;
  /** CPU seconds spent during the start by the daemon and by the sandbox (this process). */
  startCpuSeconds: { daemon: number; sandbox: number };
  rssAfterStartMb: number;
  rssAfterIdleMb: number;
  idleSeconds: number;
  /** Daemon CPU over the idle period, as a share of one core. */
  idleCpuPercent: number;
  /** Polls answered during the idle period (heartbeats at 45–55 s). */
  heartbeatsDuringIdle: number;
}

export async function runScale(
  options: { bots: number; idleSeconds: number },
  say: (line: string) => void,
): Promise<ScaleResult> {
  const sandbox = await startSandbox();
  const dir = await mkdtemp(join(tmpdir(), "bothost-scale-"));
  const concurrency = 4;
  try {
    const bots = Array.from({ length: options.bots }, (_, i) => {
      const email = `scale-${i}@sandbox.example`;
      const user = sandbox.control.createUser({
        email,
        full_name: `Scale ${i}`,
        bot: "generic",
        owner: "owner@sandbox.example",
      });
      return { name: `echo-${i}`, module: join(repoRoot, "bots/echo.ts"), email, apiKey: user.api_key };
    });
    const config = join(dir, "bothost.yaml");
    await writeDaemonConfig(config, {
      url: sandbox.url,
      state: { path: join(dir, "state") },
      bots,
      extra: `registration_concurrency: ${concurrency}`,
    });
    const spawned = performance.now();
    const ownCpu = process.cpuUsage();
    let firstRegistered: number | undefined;
    let lastRegistered = 0;
    const daemon = spawnDaemon(config, (line) => {
      if (line.msg === "event queue registered") {
        firstRegistered ??= performance.now();
        lastRegistered = performance.now();
      }
    });
    try {
      const started = await daemon.waitForLine((l) => l.msg === "daemon started", 600_000);
      const startSeconds = (performance.now() - spawned) / 1000;
      if (started.started !== options.bots) throw new Error(`only ${String(started.started)} bots started`);
      const rssAfterStart = rssBytes(daemon.pid) ?? Number.NaN;
      const serverCpu = process.cpuUsage(ownCpu);
      const startCpuSeconds = {
        daemon: round(cpuSeconds(daemon.pid) ?? Number.NaN),
        sandbox: round((serverCpu.user + serverCpu.system) / 1e6),
      };
      say(
        `  scale: ${options.bots} bots registered in ${round(startSeconds)} s, RSS ${round(rssAfterStart / 2 ** 20)} MB`,
      );
      const pollsBefore = sandbox.control.requests.filter((r) => r.path === "/events").length;
      const cpuBefore = cpuSeconds(daemon.pid) ?? Number.NaN;
      const idleStart = performance.now();
      await sleep(options.idleSeconds * 1000);
      const idle = (performance.now() - idleStart) / 1000;
      const cpu = (cpuSeconds(daemon.pid) ?? Number.NaN) - cpuBefore;
      const rssAfterIdle = rssBytes(daemon.pid) ?? Number.NaN;
      const heartbeats = sandbox.control.requests.filter((r) => r.path === "/events").length - pollsBefore;
      const result: ScaleResult = {
        bots: options.bots,
        registrationConcurrency: concurrency,
        startSeconds: round(startSeconds),
        registrationSeconds: round((lastRegistered - (firstRegistered ?? lastRegistered)) / 1000),
        startCpuSeconds,
        rssAfterStartMb: round(rssAfterStart / 2 ** 20),
        rssAfterIdleMb: round(rssAfterIdle / 2 ** 20),
        idleSeconds: round(idle),
        idleCpuPercent: round((100 * cpu) / idle, 2),
        heartbeatsDuringIdle: heartbeats,
      };
      say(
        `  scale: idle ${result.idleSeconds} s, CPU ${result.idleCpuPercent}% of a core, ${heartbeats} polls answered`,
      );
      daemon.child.kill("SIGTERM");
      await daemon.exited;
      return result;
    } finally {
      daemon.child.kill("SIGKILL");
    }
  } finally {
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
