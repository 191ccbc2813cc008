/**
 * The Redis the tests use: `REDIS_URL` (`.ci/run` starts one and sets it), else a local default.
 * Tests that need it skip with a message saying so when none answers. Every client made here
 * gives up at once when Redis is not there (no reconnect loop) and handles its `error` events,
 * so a missing Redis never surfaces as an unhandled error.
 */
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { Redis } from "ioredis";

export const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379/0";

/** True when a Redis answers PING at {@link redisUrl} within a second. */
export async function redisReachable(url = redisUrl): Promise<boolean> {
  const client = oneShotClient(url);
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** `redisUrl` without its password, if it has one: fit to print. */
function shown(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "REDIS_URL (not a URL)";
  }
}

export const noRedisMessage = `no Redis answers at ${shown(redisUrl)} (set REDIS_URL, or run redis-server): Redis tests skipped`;

/** A key prefix no other test uses. */
export function uniquePrefix(label: string): string {
  return `t-${label}-${randomBytes(4).toString("hex")}`;
}

/** Delete every key under `prefix` (state keys and cluster records). */
export async function dropPrefix(prefix: string, url = redisUrl): Promise<void> {
  const client = oneShotClient(url);
  try {
    await client.connect();
    for (const pattern of [`${prefix}:*`, `${prefix}#*`]) {
      let cursor = "0";
      do {
        const [next, keys] = await client.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) await client.del(...keys);
      } while (cursor !== "0");
    }
  } finally {
    client.disconnect();
  }
}

/** A client that connects only when asked, once, and reports failure as a rejection, never an event. */
function oneShotClient(url: string): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: () => null,
  });
  client.on("error", () => {});
  return client;
}

/** A command Redis ran, as MONITOR reports it: its client (`lua` for a script's calls) and its words. */
export interface Monitored {
  source: string;
  args: string[];
}

/**
 * Watch every command the Redis at `url` runs (MONITOR), on a plain socket of its own: ioredis's
 * monitor mode can read a monitored line that comes in the same packet as MONITOR's `+OK` as a
 * reply to nothing, and throw "Command queue state error" out of its socket handler, where no
 * test can catch it (seen with other test files busy on the same Redis). Resolves once watching.
 */
export async function monitorRedis(
  onCommand: (command: Monitored) => void,
  url = redisUrl,
): Promise<{ close(): void }> {
  const { hostname, port, password, username } = new URL(url);
  const socket = connect(Number(port || 6379), hostname);
  socket.setEncoding("utf8");
  let buffer = "";
  // The answers to AUTH (when the URL has a password) and to MONITOR come first, in order.
  let answersLeft = password ? 2 : 1;
  const ready = new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf("\r\n"); end >= 0; end = buffer.indexOf("\r\n")) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (answersLeft > 0) {
          if (line !== "+OK") reject(new Error(`MONITOR refused: ${line}`));
          else if (--answersLeft === 0) resolve();
        } else {
          const source = /^\+\S+ \[\d+ ([^\]]+)\]/.exec(line)?.[1] ?? "";
          const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, "$1"));
          onCommand({ source, args });
        }
      }
    });
  });
  if (password)
    socket.write(
      `AUTH ${username ? `${decodeURIComponent(username)} ` : ""}${decodeURIComponent(password)}\r\n`,
    );
  socket.write("MONITOR\r\n");
  await ready;
  return { close: () => socket.destroy() };
}
