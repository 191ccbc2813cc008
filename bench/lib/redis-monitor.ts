/**
 * A redis-server of a bench suite's own (a free port, no persistence) whose calls are counted:
 * Redis's MONITOR sees every call a client sends (not those a script makes inside Redis), and a
 * marker call from the bench splits them exactly (Redis runs calls one at a time).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "../../test/support/free-port.ts";
import { sleep } from "./stats.ts";

export interface MonitoredRedis {
  url: string;
  /** Every call seen since {@link watch}, in order (markers included). */
  readonly calls: { args: string[] }[];
  /** Starts counting calls. */
  watch(): Promise<void>;
  /** Sends a marker call; resolves the index at which MONITOR reported it. */
  mark(label: string): Promise<number>;
  /** The calls between two marks, markers left out. */
  between(from: number, to: number): { args: string[] }[];
  stop(): Promise<void>;
}

/** Undefined when redis-server is not on PATH. */
export async function startMonitoredRedis(dir: string): Promise<MonitoredRedis | undefined> {
  const port = await freePort();
  const server: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  const failed = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(true));
    server.once("spawn", () => resolve(false));
  });
  if (failed) return undefined;
  const url = `redis://127.0.0.1:${port}/0`;
  const client = new Redis(url, { lazyConnect: true, retryStrategy: (n) => (n > 50 ? null : 100) });
  // Refused connections while the server starts, and its end at stop: not the bench's failures.
  client.on("error", () => {});
  await untilUp(client);
  const calls: { args: string[] }[] = [];
  let monitor: Awaited<ReturnType<Redis["monitor"]>> | undefined;
  const marker = (label: string) => `bench-mark ${label}`;
  return {
    url,
    calls,
    async watch() {
      monitor = await client.monitor();
      monitor.on("monitor", (_time: string, args: string[], source: string) => {
        if (source !== "lua") calls.push({ args });
      });
    },
    async mark(label) {
      const word = marker(label);
      await client.echo(word);
      await until(() => calls.some((c) => c.args.includes(word)), "the marker call");
      return calls.findIndex((c) => c.args.includes(word));
    },
    between(from, to) {
      return calls.slice(from + 1, to).filter((c) => !c.args.some((a) => a.startsWith("bench-mark")));
    },
    async stop() {
      monitor?.disconnect();
      client.disconnect();
      server.kill("SIGKILL");
    },
  };
}

/** Resolves once `done()` holds, polled every 10 ms; throws naming `what` after `timeoutMs`. */
export async function until(done: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function untilUp(client: Redis): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await client.connect();
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error("bench: redis-server did not answer");
}
