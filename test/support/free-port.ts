import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * The kernel's ephemeral range (where every `listen(0)` and outgoing connection takes its port).
 * A port chosen up front comes from below it: a port taken from that range and closed again can be
 * handed to another test's `listen(0)` before the config that named it listens.
 */
function ephemeralStart(): number {
  try {
    const first = Number(
      readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) && first > 12_000 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * Each vitest worker draws from a slice of its own (by VITEST_POOL_ID): a port one worker found
 * free and closed again could else be found free by another worker before the first one's config
 * listened on it (seen: EADDRINUSE for an http.listen two workers drew at once).
 */
const SLICES = 8;
const top = ephemeralStart();
const bottom = Math.max(10_000, top - 12_000);
const slice = Math.floor((top - bottom) / SLICES);
const pool = Number(process.env.VITEST_POOL_ID ?? 0);
const low = bottom + (Number.isInteger(pool) ? pool % SLICES : 0) * slice;
const high = low + slice;
/** Ports this worker handed out: not handed out again while the test that took it may hold it. */
const given = new Set<number>();

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port free on 127.0.0.1 right now, outside the ephemeral range, for a config that must name
 * its port before listening (an outgoing-webhook URL, a redis-server restarted on the same port).
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (given.has(port)) continue;
    if (await tryListen(port)) {
      given.add(port);
      return port;
    }
  }
  throw new Error(`no free port found between ${low} and ${high}`);
}
