/**
 * The client's two budgets against the sandbox's real limits, over HTTP, both on one manual
 * clock: polls never hold a send, a 429 holds only its bucket, and limits the server reports
 * lower than the defaults are kept without running into 429s.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Client, createClient } from "../../src/api/create-client.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";

const BOT = "bot@sandbox.example";
let clock: ManualClock;
let sandbox: Sandbox;

beforeEach(async () => {
  clock = new ManualClock(1_750_000_000_000);
  sandbox = await startSandbox({ clock });
});
afterEach(() => sandbox.stop());

const botClient = (rateLimit?: { perMinute?: number; perHour?: number }): Client =>
  createClient({
    url: sandbox.url,
    email: BOT,
    apiKey: sandbox.control.apiKeyOf(BOT),
    clock,
    ...(rateLimit ? { rateLimit } : {}),
  });
const channelSend = { type: "channel", to: "general", topic: "t", content: "answer" } as const;
const statuses = (path: string) =>
  sandbox.control.requests.filter((r) => r.path === path).map((r) => r.status);

describe("budgets per bucket", () => {
  it("a 429 from the event-queue bucket does not delay a send", async () => {
    // The server's minute rule is lower than the client knows (it reports only the hour).
    sandbox.control.setUserRateLimit(BOT, [
      [60, 2],
      [3600, 2000],
    ]);
    const client = botClient();
    const { queue_id } = await client.events.register({ event_types: ["message"] });
    const poll = () => client.events.get({ queue_id: queue_id!, last_event_id: -1, dont_block: true });
    await poll();
    await poll();
    const third = poll();
    // Refused by the sandbox; the client waits the retry-after (about 60 s) on the clock.
    await expect.poll(() => statuses("/events")).toEqual([200, 200, 429]);
    await expect.poll(() => clock.pendingTimers).toBe(1);
    const sendAt = clock.now();
    const sent = await client.messages.send(channelSend);
    expect(sent.id).toBeGreaterThan(0);
    expect(clock.now()).toBe(sendAt);
    expect(client.budget.events.snapshot().limited).toBe(1);
    expect(client.budget.other.snapshot().limited).toBe(0);
    await clock.tick(60_000);
    await third;
    expect(statuses("/events")).toEqual([200, 200, 429, 200]);
  });

  it("with the event-queue budget spent, a send still goes out at once", async () => {
    const client = botClient({ perMinute: 3 });
    const { queue_id } = await client.events.register({ event_types: ["message"] });
    const poll = () => client.events.get({ queue_id: queue_id!, last_event_id: -1, dont_block: true });
    await Promise.all([poll(), poll(), poll()]);
    const held = poll();
    await expect.poll(() => clock.pendingTimers).toBe(1);
    expect(clock.nextDueAt()! - clock.now()).toBe(60_000);
    for (let i = 0; i < 2; i++) await client.messages.send(channelSend);
    expect(statuses("/messages")).toEqual([200, 200]);
    expect(statuses("/events")).toEqual([200, 200, 200]);
    await clock.tick(60_000);
    await held;
    expect(statuses("/events")).toEqual([200, 200, 200, 200]);
  });

  it("keeps to a lower limit the server reports, holding calls until its reset instead of a 429", async () => {
    sandbox.control.setUserRateLimit(BOT, [[3600, 5]]);
    const client = botClient();
    for (let i = 0; i < 5; i++) await client.users.me();
    expect(client.budget.other.snapshot()).toMatchObject({ perHour: 5, remainingHour: 0, usedHour: 5 });
    const sixth = client.users.me();
    await flushAsync();
    await expect.poll(() => clock.pendingTimers).toBe(1);
    // The server frees a call when the first leaves its window, an hour on (plus the second
    // its whole-second reset rounds down).
    expect(clock.nextDueAt()! - clock.now()).toBeGreaterThan(3_599_000);
    expect(clock.nextDueAt()! - clock.now()).toBeLessThanOrEqual(3_601_000);
    expect(statuses("/users/me")).toEqual([200, 200, 200, 200, 200]);
    await clock.tick(3_601_000);
    await sixth;
    expect(statuses("/users/me")).toEqual([200, 200, 200, 200, 200, 200]);
    expect(sandbox.control.rateLimitCount(BOT, "other")).toEqual({ calls: 6, refused: 0 });
  });

  it("a 429 longer than a minute, the hour spent by calls made before this client, leaves none this hour", async () => {
    sandbox.control.setUserRateLimit(BOT, [
      [60, 200],
      [3600, 3],
    ]);
    // A daemon before a restart spent the account's hour; the new one's first call is refused.
    const before = botClient();
    for (let i = 0; i < 3; i++) await before.users.me();
    const client = botClient();
    const refused = client.users.me().catch((err: unknown) => err);
    await expect.poll(() => statuses("/users/me")).toEqual([200, 200, 200, 429]);
    expect(await refused).toMatchObject({ code: "RATE_LIMIT_HIT" });
    const snapshot = client.budget.other.snapshot();
    expect(snapshot).toMatchObject({ perHour: 3, remainingHour: 0, limited: 1 });
    // The next call waits for the 429's own retry-after, not a rounded reset.
    expect(snapshot.blockedUntil! - clock.now()).toBeGreaterThan(3_599_000);
    expect(client.budget.other.nextStartAt()).toBe(snapshot.blockedUntil);
  });

  it("learns a higher hourly limit than the default and uses it", async () => {
    sandbox.control.setUserRateLimit(BOT, [
      [60, 200],
      [3600, 5000],
    ]);
    const client = botClient({ perMinute: 200, perHour: 3 });
    await client.users.me();
    expect(client.budget.other.limits).toEqual({ perMinute: 200, perHour: 5000 });
    await Promise.all(Array.from({ length: 5 }, () => client.users.me()));
    expect(clock.pendingTimers).toBe(0);
    expect(statuses("/users/me")).toHaveLength(6);
  });
});

describe("waits for the budget", () => {
  it("a call the budget did not hold is no rate-limit wait, however the clock moved meanwhile", async () => {
    // The clock crosses a millisecond between two of its readings, as a real one may.
    let reads = 0;
    const ticking = {
      now: () => clock.now() + reads++,
      setTimeout: clock.setTimeout.bind(clock),
      clearTimeout: clock.clearTimeout.bind(clock),
    };
    const waits: number[] = [];
    const client = createClient({
      url: sandbox.url,
      email: BOT,
      apiKey: sandbox.control.apiKeyOf(BOT),
      clock: ticking,
      onRateLimitWait: ({ ms }) => waits.push(ms),
    });
    await client.messages.send(channelSend);
    await client.users.me();
    expect(waits).toEqual([]);
  });

  it("a call held 5 s or more for the budget is logged, at most once a minute", async () => {
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const note = (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg });
    const logger = { debug() {}, info: note, warn() {}, error() {} } as never;
    const client = createClient({
      url: sandbox.url,
      email: BOT,
      apiKey: sandbox.control.apiKeyOf(BOT),
      clock,
      logger,
      rateLimit: { perMinute: 2, perHour: 100 },
    });
    await client.messages.send(channelSend);
    await client.messages.send(channelSend);
    // Two more wait a minute for the first two to leave the window: both start then, one line.
    const held = [client.messages.send(channelSend), client.messages.send(channelSend)];
    await expect.poll(() => clock.pendingTimers).toBeGreaterThan(0);
    await clock.tick(60_000);
    await Promise.all(held);
    // A minute on, the next wait is logged again.
    const later = [client.messages.send(channelSend), client.messages.send(channelSend)];
    await expect.poll(() => clock.pendingTimers).toBeGreaterThan(0);
    await clock.tick(60_000);
    await Promise.all(later);
    const waits = lines.filter((l) => l.msg === "a call waited for the account's rate budget");
    expect(waits.map((l) => l.obj)).toEqual([
      { endpoint: "POST /messages", waitedMs: 60_000 },
      { endpoint: "POST /messages", waitedMs: 60_000 },
    ]);
  });

  it("a start reserved is its call's: a call asking meanwhile waits, and one given back is free again", async () => {
    const client = botClient({ perMinute: 2 });
    const bucket = client.budget.of("POST", "/messages");
    await client.messages.send(channelSend);
    const slot = await bucket.reserve(); // the minute's last call
    const other = client.messages.send(channelSend);
    await expect.poll(() => clock.pendingTimers).toBe(1);
    await client.messages.send(channelSend, { slot }); // starts in its slot, at once
    expect(statuses("/messages")).toEqual([200, 200]);
    expect(slot.use()).toBe(false); // a slot serves one call
    await clock.tick(60_000);
    await other;
    expect(statuses("/messages")).toEqual([200, 200, 200]);
    const unused = await bucket.reserve();
    expect(bucket.nextStartAt()).toBeGreaterThan(clock.now());
    unused.release();
    expect(bucket.nextStartAt()).toBe(clock.now());
  });

  it("a reserved start used later counts from when its call left, as the server counts it", async () => {
    sandbox.control.setUserRateLimit(BOT, [
      [60, 2],
      [3600, 2000],
    ]);
    const client = botClient({ perMinute: 2 });
    const slot = await client.budget.of("POST", "/messages").reserve();
    await clock.tick(20); // the work between the reservation and the call (a report's claim, committed)
    await client.messages.send(channelSend, { slot });
    await client.messages.send(channelSend);
    const third = client.messages.send(channelSend);
    await expect.poll(() => clock.pendingTimers).toBe(1);
    await clock.tick(60_020);
    await third;
    expect(statuses("/messages")).toEqual([200, 200, 200]);
    expect(client.budget.other.snapshot().limited).toBe(0);
  });
});
