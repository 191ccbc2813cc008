/**
 * A bot in a busy organization for a simulated hour: the sandbox (real limits on) and the bot's
 * client, poll pacing and long-poll loop share one manual clock, so an hour of 5 or 20 channel
 * messages a second runs in seconds over real HTTP. The bot answers a ping every 5 s. Counts
 * only: no 429, each bucket within 200 calls a minute and 2,000 an hour, every ping answered.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { busiest } from "../../bench/lib/stats.ts";
import { createClient } from "../../src/api/create-client.ts";
import { PollPacer } from "../../src/events/poll-pacing.ts";
import { QueueConsumer } from "../../src/events/queue-consumer.ts";
import { queueApiFor } from "../../src/events/server-queue.ts";
import { rateBucketOf } from "../../src/sandbox/http/rate-limit.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { ParsedEvent } from "../../src/wire/events.ts";
import { ManualClock } from "../support/manual-clock.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const silent = { debug() {}, info() {}, warn() {}, error() {} };
let clock: ManualClock;
let sandbox: Sandbox;
/** Sandbox time of every rate-limited call, per bucket. */
let calls: Record<"events" | "other", number[]>;
let refused: number;

beforeEach(async () => {
  clock = new ManualClock(1_750_000_000_000);
  Object.assign(inFlight, { polls: 0, sends: 0, held: 0 });
  calls = { events: [], other: [] };
  refused = 0;
  sandbox = await startSandbox({
    clock,
    heartbeatSeconds: 45,
    onResponse: (r) => {
      if (r.route === null || r.route === "/server_settings") return;
      if (r.status === 429) refused++;
      else calls[rateBucketOf(r.method, r.route)].push(clock.now());
    },
  });
});
afterEach(() => sandbox.stop());

/** What the bot has under way over HTTP, and whether its next poll waits on the pacer. */
const inFlight = { polls: 0, sends: 0, held: 0 };

/**
 * Resolves once the bot is idle until the clock moves: every pong answered, and its poll either
 * parked on the server with nothing waiting for it, or held by the pacer (a timer on the clock).
 * Real time passes only for the sockets; the manual clock stands still meanwhile.
 */
async function settle(): Promise<void> {
  const idle = () => {
    if (inFlight.sends > 0) return false;
    if (inFlight.polls === 0) return inFlight.held === 1;
    const queue = sandbox.control.queues().at(-1);
    return inFlight.polls === 1 && queue?.parked === true && queue.pending_events === 0;
  };
  for (let turns = 0; !idle(); turns++) {
    if (turns > 100_000) throw new Error(`the bot never settled: ${JSON.stringify(inFlight)}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function busyHour(perSecond: number) {
  const client = createClient({ url: sandbox.url, email: BOT, apiKey: sandbox.control.apiKeyOf(BOT), clock });
  const pacer = new PollPacer({ bucket: client.budget.events, clock });
  const hold = pacer.hold.bind(pacer);
  pacer.hold = (ms, signal) => {
    inFlight.held++;
    return hold(ms, signal).finally(() => inFlight.held--);
  };
  const pings = new Set<number>();
  const answered = new Set<number>();
  const api = queueApiFor(client, (signal) =>
    client.events.register({ event_types: ["message"], all_public_streams: true }, { signal }),
  );
  const consumer = new QueueConsumer({
    api: {
      ...api,
      poll: (...args) => {
        inFlight.polls++;
        return api.poll(...args).finally(() => inFlight.polls--);
      },
    },
    log: silent,
    clock,
    pacer,
    onRegistered: async () => {},
    onEvents: async (batch: ParsedEvent[]) => {
      for (const { event } of batch) {
        if (event.type !== "message") continue;
        const message = event.message as { id: number; content: string };
        if (!/^(<p>)?ping(<\/p>)?$/.test(message.content)) continue;
        const id = message.id;
        inFlight.sends++;
        void client.messages
          .send({ type: "channel", to: "general", topic: "pong", content: `pong ${id}` })
          .then(() => answered.add(id))
          .finally(() => inFlight.sends--);
      }
    },
    waitForCapacity: async () => {},
    hasCapacity: () => true,
  });
  await consumer.start();
  for (let second = 0; second < 3600; second++) {
    for (let i = 0; i < perSecond; i++) {
      const ping = i === 0 && second % 5 === 0;
      const content = ping ? "ping" : `chatter ${second}.${i}`;
      const { id } = sandbox.control.sendAs(MEMBER, { type: "channel", to: "general", topic: "t", content });
      if (ping) pings.add(id);
    }
    await settle();
    await clock.tick(1000);
  }
  for (let i = 0; i < 30 && answered.size < pings.size; i++) {
    await settle();
    await clock.tick(1000);
  }
  await consumer.stop();
  return { pings: pings.size, answered: answered.size, pacing: pacer.snapshot() };
}

describe("a simulated hour in a busy organization", () => {
  it.each([5, 20])(
    "%i messages a second: no 429, within both windows per bucket, every ping answered",
    async (rate) => {
      const run = await busyHour(rate);
      expect(refused).toBe(0);
      expect(calls.events.length).toBeGreaterThan(0);
      expect(run.pings).toBe(720);
      expect(run.answered).toBe(run.pings);
      for (const bucket of ["events", "other"] as const) {
        expect(busiest(calls[bucket], 60_000), `${bucket} per minute`).toBeLessThanOrEqual(200);
        expect(busiest(calls[bucket], 3_600_000), `${bucket} per hour`).toBeLessThanOrEqual(2000);
      }
      // The polls were spaced: far fewer than one per message, yet enough to bring every batch.
      expect(calls.events.length).toBeLessThan(2000);
      expect(run.pacing.held).toBeGreaterThan(1000);
    },
    240_000,
  );
});
