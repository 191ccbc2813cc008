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

const high = ephemeralStart();
const low = Math.max(10_000, high - 12_000);

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
    if (await tryListen(port)) return port;
  }
  throw new Error(`no free port found between ${low} and ${high}`);
}
