/**
 * A bot stopped while its first queue is being registered leaves no queue on the server: the
 * stop waits for that registration, and a queue it made is deleted, the log saying so. Against the sandbox over
 * real HTTP; the registration's answer is held until the stop was asked for. And a renewal whose
 * old queue goes away with its poll cut registers the next one as a renewal, logging no failure.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { silentLogger } from "../../src/api/logger.ts";
import { QueueConsumer } from "../../src/events/queue-consumer.ts";
import { queueApiFor } from "../../src/events/server-queue.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { realClock } from "../../src/time/clock.ts";
import { deferred } from "../support/deferred.ts";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";

const BOT = "reader-bot@sandbox.example";
let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.stop();
});

it("a stop during the first registration waits for it and deletes the queue it made", async () => {
  const client = await readerBot();
  const registered = deferred();
  const stopAsked = deferred();
  // The server makes the queue; its answer reaches the consumer only once the stop was asked for.
  const api = queueApiFor(client, async () => {
    const reg = await client.events.register({ event_types: ["message"] });
    registered.resolve();
    await stopAsked.promise;
    return reg;
  });
  const abort = new AbortController();
  const infos: string[] = [];
  const log = { ...silentLogger, info: (_obj: unknown, msg?: string) => void infos.push(String(msg)) };
  const consumer = consumerOf(api, abort.signal, log);
  const started = consumer.start();
  await registered.promise;
  expect(sandbox!.control.queues().filter((q) => q.email === BOT)).toHaveLength(1);
  abort.abort();
  const stopped = consumer.stop();
  stopAsked.resolve();
  await stopped;
  await started;
  expect(sandbox!.control.queues().filter((q) => q.email === BOT)).toEqual([]);
  expect(consumer.state).toBe("stopped");
  // As a graceful shutdown's queue: the log says it went.
  expect(infos).toContain("event queue deleted");
});

it("a stop while the registration's reply is on its way deletes the queue it made", async () => {
  const client = await readerBot();
  const made = deferred();
  // The server made the queue; its reply takes a moment, and a request aborted meanwhile never
  // reads it (as a connection closed by the client).
  const api = queueApiFor(client, async (signal) => {
    const reg = await client.events.register({ event_types: ["message"] });
    made.resolve();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, 200);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
    return reg;
  });
  const abort = new AbortController();
  const consumer = consumerOf(api, abort.signal);
  const started = consumer.start();
  await made.promise;
  abort.abort();
  await consumer.stop();
  await started;
  expect(sandbox!.control.queues().filter((q) => q.email === BOT)).toEqual([]);
  expect(consumer.state).toBe("stopped");
});

/** A sandbox with the reader bot; its client. */
async function readerBot() {
  sandbox = await startSandbox();
  sandbox.control.createUser({
    email: BOT,
    full_name: "Reader",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
  return createClient({ url: sandbox.url, email: BOT, apiKey: sandbox.control.apiKeyOf(BOT) });
}

function consumerOf(api: ReturnType<typeof queueApiFor>, signal: AbortSignal, log = silentLogger) {
  return new QueueConsumer({
    api,
    log,
    clock: realClock,
    signal,
    onRegistered: async () => {},
    onEvents: async () => {},
    waitForCapacity: async () => {},
  });
}

it("a renewal whose old poll is cut registers anew at once, as a renewal, with no failure logged", async () => {
  const client = await readerBot();
  const reasons: string[] = [];
  const warnings: string[] = [];
  const api = queueApiFor(client, () => client.events.register({ event_types: ["message"] }));
  // The old queue goes away with its parked poll cut (as a queue collected meanwhile is).
  api.deleteQueue = async (queueId) => sandbox!.control.expireQueue(queueId);
  const abort = new AbortController();
  const log = { ...silentLogger, warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)) };
  const consumer = new QueueConsumer({
    api,
    log,
    clock: realClock,
    signal: abort.signal,
    onRegistered: async (_reg, reason) => {
      reasons.push(reason);
    },
    onEvents: async () => {},
    waitForCapacity: async () => {},
  });
  await consumer.start();
  await expect.poll(() => consumer.state).toBe("polling");
  consumer.renew();
  await expect.poll(() => reasons).toEqual(["start", "event_types"]);
  expect(warnings).toEqual([]);
  abort.abort();
  await consumer.stop();
});

it("a server that drops every new queue before its first poll is answered: registrations wait longer each time, not back to back", async () => {
  const client = await readerBot();
  sandbox!.control.setRateLimit(true);
  const clock = new ManualClock(Date.now());
  // Every poll finds its queue gone, as on a server that loses each queue at once.
  sandbox!.control.failNext(100, {
    status: 400,
    body: { result: "error", code: "BAD_EVENT_QUEUE_ID", msg: "Bad event queue ID: x", queue_id: "x" },
    paths: ["/events"],
    methods: ["GET"],
  });
  const api = queueApiFor(client, () => client.events.register({ event_types: ["message"] }));
  const abort = new AbortController();
  const consumer = new QueueConsumer({
    api,
    log: silentLogger,
    clock,
    signal: abort.signal,
    onRegistered: async () => {},
    onEvents: async () => {},
    waitForCapacity: async () => {},
  });
  await consumer.start();
  const registers = () => sandbox!.control.requests.filter((r) => r.path === "/register").length;
  // The first queue, and the one after the first loss at once; the next waits for the clock.
  await expect.poll(() => clock.nextDueAt()).toBeDefined();
  await flushAsync(20);
  expect(registers()).toBe(2);
  // Half a second to a second; the one after waits again.
  await clock.advance(1000);
  await expect.poll(registers).toBe(3);
  await flushAsync(20);
  expect(registers()).toBe(3);
  abort.abort();
  await consumer.stop();
});
