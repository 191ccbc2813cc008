/**
 * Reading ahead: with `hasCapacity`, the consumer sends the next poll while `onEvents` is still
 * dispatching a batch (a large batch's poll before it is handed over, a small one's one turn
 * after); without it (or without capacity), the next poll waits for `onEvents`. Against the
 * sandbox over real HTTP.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { silentLogger } from "../../src/api/logger.ts";
import { QueueConsumer } from "../../src/events/queue-consumer.ts";
import { queueApiFor } from "../../src/events/server-queue.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { realClock } from "../../src/time/clock.ts";
import type { ParsedEvent } from "../../src/wire/events.ts";
import { deferred } from "../support/deferred.ts";

const BOT = "reader-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

let sandbox: Sandbox;
let consumer: QueueConsumer | undefined;

beforeEach(async () => {
  sandbox = await startSandbox();
  sandbox.control.createUser({
    email: BOT,
    full_name: "Reader",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
});

afterEach(async () => {
  await consumer?.stop();
  consumer = undefined;
  await sandbox.stop();
});

/**
 * A consumer whose first batch is held in `onEvents` until `gate` opens; `sent` counts the polls
 * it sent (when they leave, not when they are answered).
 */
async function startConsumer(hasCapacity: (() => boolean) | undefined) {
  const client = createClient({ url: sandbox.url, email: BOT, apiKey: sandbox.control.apiKeyOf(BOT) });
  const gate = deferred();
  const batches: number[][] = [];
  const sent = { polls: 0 };
  const api = queueApiFor(client, (signal) =>
    client.events.register({ event_types: ["message"] }, { signal }),
  );
  consumer = new QueueConsumer({
    api: {
      ...api,
      poll: (...args) => {
        sent.polls++;
        return api.poll(...args);
      },
    },
    log: silentLogger,
    clock: realClock,
    onRegistered: async () => {},
    onEvents: async (batch: ParsedEvent[]) => {
      batches.push(batch.map((p) => (p.event as { message: { id: number } }).message.id));
      if (batches.length === 1) await gate.promise;
    },
    waitForCapacity: async () => {},
    ...(hasCapacity ? { hasCapacity } : {}),
  });
  await consumer.start();
  return { gate, batches, sent };
}

const send = (content: string) => sandbox.control.sendAs(MEMBER, { type: "private", to: [BOT], content }).id;
const answeredPolls = () =>
  sandbox.control.requests.filter((r) => r.method === "GET" && r.path === "/events" && r.status === 200)
    .length;

describe("QueueConsumer read-ahead", () => {
  it("fetches the next batch while the current one is still being dispatched", async () => {
    const { gate, batches } = await startConsumer(() => true);
    const first = send("one");
    await expect.poll(() => batches).toEqual([[first]]);
    const second = send("two");
    // The poll sent ahead is answered with the second message while the first batch is held.
    await expect.poll(answeredPolls).toBe(2);
    expect(batches).toEqual([[first]]);
    gate.resolve();
    await expect.poll(() => batches).toEqual([[first], [second]]);
  });

  it("does not read ahead without capacity: the next poll waits for the dispatch", async () => {
    let room = false;
    const asked = deferred();
    const { gate, batches, sent } = await startConsumer(() => {
      asked.resolve();
      return room;
    });
    const first = send("one");
    await expect.poll(() => batches).toEqual([[first]]);
    const second = send("two");
    // Asked for room while the batch is held, told there is none: no poll went out after it.
    await asked.promise;
    expect(sent.polls).toBe(1);
    expect(answeredPolls()).toBe(1);
    room = true;
    gate.resolve();
    await expect.poll(() => batches).toEqual([[first], [second]]);
    expect(answeredPolls()).toBe(2);
  });
});

describe("what goes first: the next poll or the batch's dispatch", () => {
  /** A consumer that notes, in order, each poll it sends and each batch it hands over (real HTTP). */
  async function ordered() {
    const client = createClient({ url: sandbox.url, email: BOT, apiKey: sandbox.control.apiKeyOf(BOT) });
    const api = queueApiFor(client, (signal) =>
      client.events.register({ event_types: ["message"] }, { signal }),
    );
    const steps: string[] = [];
    consumer = new QueueConsumer({
      api: {
        ...api,
        poll: (...args) => {
          steps.push("poll");
          return api.poll(...args);
        },
      },
      log: silentLogger,
      clock: realClock,
      onRegistered: async () => {},
      onEvents: async (batch: ParsedEvent[]) => {
        steps.push(`batch of ${batch.length}`);
      },
      waitForCapacity: async () => {},
      hasCapacity: () => true,
    });
    await consumer.start();
    return steps;
  }

  it("a small batch is handed over first (a handler's reply leaves before the next poll)", async () => {
    const steps = await ordered();
    await expect.poll(() => steps.length).toBe(1);
    send("one");
    await expect.poll(() => steps.slice(1, 3)).toEqual(["batch of 1", "poll"]);
  });

  it("a heartbeat is not handed over: the next poll follows on the same queue", async () => {
    await sandbox.stop();
    sandbox = await startSandbox({ heartbeatSeconds: 1 });
    sandbox.control.createUser({
      email: BOT,
      full_name: "Reader",
      bot: "generic",
      owner: "owner@sandbox.example",
    });
    const steps = await ordered();
    await expect.poll(() => steps.length, { timeout: 5000 }).toBeGreaterThanOrEqual(3);
    expect(steps.slice(0, 3)).toEqual(["poll", "poll", "poll"]);
    expect(consumer?.lastHeartbeatAt).toBeTypeOf("number");
    expect(consumer?.registrations).toBe(1);
  });

  it("a large batch after the next poll is sent (the server prepares it meanwhile)", async () => {
    // Ten messages wait in the queue before the first poll is served, so they come as one batch.
    sandbox.control.delay(60_000, { paths: ["/events"] });
    const steps = await ordered();
    await sandbox.control.waitFor(() => sandbox.control.delayed() === 1);
    for (let i = 0; i < 10; i++) send(`m${i}`);
    sandbox.control.delay(0);
    await expect.poll(() => steps.slice(0, 3), { timeout: 3000 }).toEqual(["poll", "poll", "batch of 10"]);
  });
});
