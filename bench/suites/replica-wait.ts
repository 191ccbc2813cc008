/**
 * What confirming writes on a replica (`WAIT 1`, as the store does through Sentinel) costs on the
 * hot path: a primary and two replicas of the suite's own (redis-server on free ports), events
 * arriving at a steady rate, each one atomic batch of two writes (a handled mark and an effect
 * record, both with an expiry: keys of its own, so concurrent events do not race), with the store's replica wait off (a) and on (b: every online replica). Reported per mode:
 * the bench process's CPU per event (the client side: the Redis processes are not counted) and
 * the lag from an event's arrival to its writes being confirmed, p50 and p99.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../../test/support/free-port.ts";
import { RedisStore } from "../lib/built.ts";
import { median, percentile, round, sleep } from "../lib/stats.ts";

export interface ReplicaWaitRow {
  mode: "no wait" | "WAIT";
  events: number;
  cpuUsPerEvent: number;
  lagP50Ms: number;
  lagP99Ms: number;
}

export interface ReplicaWaitResult {
  available: boolean;
  note: string;
  rate: number;
  rows: ReplicaWaitRow[];
}

export async function runReplicaWait(
  options: { rate: number; seconds: number; rounds: number },
  say: (line: string) => void,
): Promise<ReplicaWaitResult> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-bench-replica-"));
  const children: ChildProcess[] = [];
  try {
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const [i, port] of ports.entries()) {
      const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
      args.push("--dir", dir, "--dbfilename", `d${port}.rdb`);
      if (i > 0) args.push("--replicaof", "127.0.0.1", String(ports[0]));
      const child = spawn("redis-server", args, { stdio: "ignore" });
      const failed = await new Promise<boolean>((resolve) => {
        child.once("error", () => resolve(true));
        child.once("spawn", () => resolve(false));
      });
      if (failed) {
        const note = "redis-server is not on PATH; not measured";
        say(`  replica wait: ${note}`);
        return { available: false, note, rate: options.rate, rows: [] };
      }
      children.push(child);
    }
    const url = `redis://127.0.0.1:${ports[0]}/0`;
    await untilReplicas(url, 2);
    const byMode: Record<ReplicaWaitRow["mode"], ReplicaWaitRow[]> = { "no wait": [], WAIT: [] };
    for (let round = 0; round < options.rounds; round++) {
      const order: ReplicaWaitRow["mode"][] = round % 2 === 0 ? ["no wait", "WAIT"] : ["WAIT", "no wait"];
      for (const mode of order) {
        const row = await measure(url, mode, options);
        say(
          `  replica wait, ${mode}: ${row.cpuUsPerEvent} µs CPU/event, lag p50 ${row.lagP50Ms} ms p99 ${row.lagP99Ms} ms`,
        );
        byMode[mode].push(row);
      }
    }
    const rows = (Object.keys(byMode) as ReplicaWaitRow["mode"][]).map((mode) => {
      const runs = byMode[mode];
      return {
        mode,
        events: runs.reduce((sum, r) => sum + r.events, 0),
        cpuUsPerEvent: median(runs.map((r) => r.cpuUsPerEvent)),
        lagP50Ms: median(runs.map((r) => r.lagP50Ms)),
        lagP99Ms: median(runs.map((r) => r.lagP99Ms)),
      };
    });
    return { available: true, note: "", rate: options.rate, rows };
  } finally {
    for (const child of children) child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
}

async function measure(
  url: string,
  mode: ReplicaWaitRow["mode"],
  options: { rate: number; seconds: number },
): Promise<ReplicaWaitRow> {
  const prefix = `bench-replica-${mode === "no wait" ? "a" : "b"}-${Date.now()}`;
  const store = await RedisStore.open({ url, prefix, replicaWaitMs: mode === "no wait" ? 0 : 1_000 });
  const runtime = store.namespace("b0").namespace("runtime");
  const lags: number[] = [];
  const pending: Promise<void>[] = [];
  const total = options.rate * options.seconds;
  const event = async (id: number, arrived: number) => {
    await runtime.applyWrites([
      { op: "set", key: `handled:${id}`, text: "1", ttlMs: 600_000 },
      { op: "set", key: `effect:${id}`, text: "sent", ttlMs: 600_000 },
    ]);
    lags.push(performance.now() - arrived);
  };
  // A warm-up second, not measured.
  for (let i = 0; i < options.rate; i++) await event(-i - 1, performance.now());
  lags.length = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  // Events arrive on a schedule (every 1/rate s), each handled as it comes: open loop, so a slow
  // write shows up as lag instead of slowing the arrivals.
  for (let id = 0; id < total; id++) {
    const due = start + (id * 1000) / options.rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    // Sent up to 1 ms early (timer granularity): lag counts from when it was sent then.
    pending.push(event(id, Math.max(due, performance.now())));
  }
  await Promise.all(pending);
  const used = process.cpuUsage(cpu);
  await store.namespace("b0").clear();
  await store.close();
  return {
    mode,
    events: total,
    cpuUsPerEvent: round((used.user + used.system) / total),
    lagP50Ms: round(percentile(lags, 50)),
    lagP99Ms: round(percentile(lags, 99)),
  };
}

async function untilReplicas(url: string, count: number): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: null });
  try {
    for (let i = 0; i < 200; i++) {
      const info = await client.info("replication").catch(() => "");
      if (info.split("\n").filter((l) => /^slave\d+:.*state=online/.test(l)).length >= count) return;
      await sleep(50);
    }
    throw new Error("the replicas did not come online in 10 s");
  } finally {
    client.disconnect();
  }
}
