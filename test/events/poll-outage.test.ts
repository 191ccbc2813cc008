/**
 * The chat server down for a while (its port refusing connections): one warn line when the outage
 * begins and one info line when polls are answered again, each retry between them (the client's
 * own, then the consumer's backoff) at debug. Against the sandbox over real HTTP, behind a TCP
 * relay of the test's that is closed and opened again on the same port.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { type Logger, silentLogger } from "../../src/api/logger.ts";
import { QueueConsumer } from "../../src/events/queue-consumer.ts";
import { queueApiFor } from "../../src/events/server-queue.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { realClock } from "../../src/time/clock.ts";

const BOT = "reader-bot@sandbox.example";
const OWNER = "owner@sandbox.example";
let sandbox: Sandbox | undefined;
let relay: Server | undefined;
const open = new Set<Socket>();
afterEach(async () => {
  for (const socket of open) socket.destroy();
  relay?.close();
  await sandbox?.stop();
});

/** Listen on `port` (0: any), relaying each connection to `target`. */
function relayTo(target: number, port: number): Promise<number> {
  relay = createServer((inbound) => {
    const outbound = createConnection(target, "127.0.0.1");
    for (const socket of [inbound, outbound]) {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.on("error", () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  return new Promise((resolve) =>
    relay!.listen(port, "127.0.0.1", () => resolve((relay!.address() as { port: number }).port)),
  );
}

/** The relay closed: its port refuses connections, and the connections open are cut. */
function down(): Promise<void> {
  const closed = new Promise<void>((resolve) => relay!.close(() => resolve()));
  for (const socket of open) socket.destroy();
  return closed;
}

it("says an outage of the polls once at warn as it begins, and at info as it ends", async () => {
  sandbox = await startSandbox();
  sandbox.control.createUser({ email: BOT, full_name: "Reader", bot: "generic", owner: OWNER });
  const port = await relayTo(Number(new URL(sandbox.url).port), 0);
  const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg?: string) =>
    void lines.push({ level, msg: String(msg), obj });
  const log: Logger = {
    ...silentLogger,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
  const client = createClient({
    url: `http://127.0.0.1:${port}`,
    email: BOT,
    apiKey: sandbox.control.apiKeyOf(BOT),
    logger: log,
    retry: { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 10 },
  });
  const api = queueApiFor(client, () => client.events.register({ event_types: ["message"] }));
  const abort = new AbortController();
  const received: unknown[] = [];
  const consumer = new QueueConsumer({
    api,
    log,
    clock: realClock,
    signal: abort.signal,
    backoff: { initialMs: 5, maxMs: 10 },
    onRegistered: async () => {},
    onEvents: async (events) => void received.push(...events),
    waitForCapacity: async () => {},
  });
  const failed = () => lines.filter((l) => l.msg === "event queue request failed; backing off");
  await consumer.start();
  await expect.poll(() => consumer.state).toBe("polling");
  await down();
  // The parked poll is cut; the next ones find the port closed: each is tried four times by the
  // client (nothing was sent), then backed off by the consumer.
  await expect.poll(() => failed().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
  await relayTo(Number(new URL(sandbox.url).port), port);
  // The poll parked once the server is back ends with a message.
  sandbox.control.sendAs(OWNER, { type: "private", to: [BOT], content: "back" });
  await expect.poll(() => received.length, { timeout: 10_000 }).toBe(1);
  const levels = (re: RegExp) => lines.filter((l) => re.test(l.msg)).map((l) => l.level);
  // At warn: the outage's first failed poll only; the client's retries and the later polls at debug.
  expect(lines.filter((l) => l.level === "warn").map((l) => l.msg)).toEqual([
    "event queue request failed; backing off",
  ]);
  expect(levels(/^GET \/events failed \(network error\); retrying in/)).toContain("debug");
  expect(
    failed()
      .slice(1)
      .every((l) => l.level === "debug"),
  ).toBe(true);
  const ended = lines.filter((l) => l.msg === "event queue requests succeed again");
  expect(ended).toEqual([
    {
      level: "info",
      msg: "event queue requests succeed again",
      obj: expect.objectContaining({ failedRequests: failed().length }),
    },
  ]);
  abort.abort();
  await consumer.stop();
});
