/**
 * A logged error with a cause (`{ err }`): each message of the chain is in the line once, the
 * stacks say where each was thrown, and a Redis password in the store's URL is in none of it.
 * Against real failures: a Redis of its own that requires a password, answering WRONGTYPE to a
 * read, and a closed port refusing the connection. Needs `redis-server` on PATH.
 */
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/create-logger.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { hasRedisServer, type OwnRedis, startOwnRedis } from "../support/cluster.ts";
import { logSink } from "../support/log-lines.ts";

const available = hasRedisServer();
if (!available)
  console.warn("serialize-error: redis-server is not on PATH (apt-get install redis-server): skipped");

const PASSWORD = "pw-3f9a-never-logged";
let redis: OwnRedis | undefined;

afterAll(async () => {
  await redis?.stop();
});

/** The daemon's logger writing JSON lines into an array. */
function captured() {
  const { stream, lines } = logSink();
  return { log: createLogger({ destination: stream, pretty: false }), lines };
}

const count = (text: string, part: string) => text.split(part).length - 1;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(!available)("a logged error's causes", () => {
  it("a read Redis answers with WRONGTYPE: the reply once, where it failed, no password", async () => {
    redis ??= await startOwnRedis({ requirepass: PASSWORD });
    const url = new URL(redis.url);
    url.password = PASSWORD;
    const store = await RedisStore.open({ url: url.toString(), prefix: "wrongtype" });
    const client = new Redis(url.toString());
    try {
      await client.rpush("wrongtype:echo/tally", "not a JSON value");
      const failure = await store
        .namespace("echo")
        .get("tally")
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      const { log, lines } = captured();
      log.error({ err: failure }, "could not read the tally");

      expect(lines).toHaveLength(1);
      const line = lines[0]!;
      const reply = "WRONGTYPE Operation against a key holding the wrong kind of value";
      expect(count(line, reply)).toBe(1);
      expect(line).not.toContain(PASSWORD);
      const { err } = JSON.parse(line);
      expect(err.message).toBe(
        `Redis at redis://127.0.0.1:${url.port}/0 did not complete a read: ${reply}. Check that Redis runs and is reachable.`,
      );
      expect(err).toMatchObject({ type: "StateError", code: "STATE_UNAVAILABLE" });
      // Where: the store's frames, then the reply's own, each under its type.
      expect(err.stack).toMatch(/^StateError\n {4}at .*\ncaused by: ReplyError\n {4}at /s);
    } finally {
      client.disconnect();
      await store.close();
    }
  });

  it("a connection refused: its cause once, no password", async () => {
    const port = await closedPort();
    const failure = await RedisStore.open({ url: `redis://:${PASSWORD}@127.0.0.1:${port}/0` }).then(
      () => undefined,
      (err: unknown) => err,
    );
    const { log, lines } = captured();
    log.error({ err: failure }, "could not open the state store");

    const line = lines[0]!;
    const refused = `connect ECONNREFUSED 127.0.0.1:${port}`;
    expect(count(line, refused)).toBe(1);
    expect(line).not.toContain(PASSWORD);
    expect(JSON.parse(line).err.message).toBe(
      `Cannot connect to Redis at redis://127.0.0.1:${port}/0 (state.redis): ${refused}. Check that Redis runs there and that the URL, password and database are right.`,
    );
  });
});
