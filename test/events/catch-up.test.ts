/**
 * Catch-up after a new queue: what was missed since the ledger's cursor, within the replay limits.
 * Against the sandbox over real HTTP, its clock set so some missed messages are old.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { catchUp } from "../../src/events/catch-up.ts";
import { DeliveryLedger } from "../../src/pipeline/delivery-ledger.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import type { Message } from "../../src/wire/records.ts";
import { ManualClock } from "../support/manual-clock.ts";

const BOT = "catch-up-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const HOUR = 3_600_000;

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
});

it("replays the newest messages within the limits, counts the rest as skipped, and reports a gap", async () => {
  const clock = new ManualClock(Date.now() - 2 * HOUR);
  const s = await startSandbox({ clock });
  sandbox = s;
  s.control.createUser({ email: BOT, full_name: "Catch-up", bot: "generic", owner: "owner@sandbox.example" });
  const send = (content: string) => s.control.sendAs(MEMBER, { type: "private", to: [BOT], content }).id;

  const handled = send("handled before the queue was lost");
  // Missed two hours ago: older than max_age.
  const [old1, old2] = [send("old 1"), send("old 2")];
  await clock.tickTo(Date.now() - 60_000);
  // Missed a minute ago: the newest two fit max_messages; the third does not.
  const [recent1, recent2, recent3] = [send("recent 1"), send("recent 2"), send("recent 3")];

  const ledger = await DeliveryLedger.open(new MemoryStore());
  await ledger.baseline(handled);
  const accepted: number[] = [];
  const result = await catchUp(
    {
      client: createClient({ url: s.url, email: BOT, apiKey: s.control.apiKeyOf(BOT) }),
      ledger,
      narrow: undefined,
      limits: { maxMessages: 2, maxAgeMs: HOUR },
      eventTypes: ["message", "reaction"],
      reason: "queue_expired",
      since: 1234,
      now: clock.now(),
      signal: new AbortController().signal,
      // The pipeline refuses the last one (as a duplicate would be): not counted as replayed.
      accept: (m: Message) => accepted.push(m.id) > 0 && m.id !== recent3,
    },
    false,
  );

  expect([old1, old2, recent1].every((id) => !accepted.includes(id))).toBe(true);
  expect(accepted).toEqual([recent2, recent3]);
  expect(result).toMatchObject({ replayed: 1, skipped: 3 });
  expect(result.gap).toMatchObject({
    type: "gap",
    reason: "queue_expired",
    since: 1234,
    eventTypes: ["reaction"],
    replayedMessages: 1,
    skippedMessages: 3,
  });
  expect(result.gap).not.toHaveProperty("id"); // bothost made it: no queue id, not even a fake one
});

it("reads back only the pages it replays: older messages past max_age or max_messages are not fetched", async () => {
  const clock = new ManualClock(Date.now() - 7 * HOUR);
  const s = await startSandbox({ clock });
  sandbox = s;
  s.control.createUser({ email: BOT, full_name: "Catch-up", bot: "generic", owner: "owner@sandbox.example" });
  s.control.setRateLimit(true);
  const send = (content: string) => s.control.sendAs(MEMBER, { type: "private", to: [BOT], content }).id;
  const handled = send("handled before the outage");
  // A six-hour outage in a busy conversation: 4,000 messages older than max_age, then 1,500 recent.
  let lastOld = handled;
  for (let i = 0; i < 4000; i++) lastOld = send(`old ${i}`);
  await clock.tickTo(Date.now() - 30 * 60_000);
  const recent = Array.from({ length: 1500 }, (_, i) => send(`recent ${i}`));

  const client = createClient({ url: s.url, email: BOT, apiKey: s.control.apiKeyOf(BOT), clock });
  const run = async (limits: { maxMessages: number; maxAgeMs: number }, cursor = handled) => {
    const ledger = await DeliveryLedger.open(new MemoryStore());
    await ledger.baseline(cursor);
    const accepted: number[] = [];
    const before = s.control.requests.length;
    const result = await catchUp(
      {
        client,
        ledger,
        narrow: undefined,
        limits,
        eventTypes: ["message"],
        reason: "start",
        since: undefined,
        now: clock.now(),
        signal: new AbortController().signal,
        accept: (m: Message) => accepted.push(m.id) > 0,
      },
      false,
    );
    const calls = s.control.requests.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`);
    return { accepted, result, calls };
  };

  // A read forward from the cursor does not reach the newest: more than a page was missed. Then,
  // within max_messages, the 1,500 recent ones in two pages back; the old ones past max_age are not read.
  const byAge = await run({ maxMessages: 2000, maxAgeMs: HOUR });
  expect(byAge.accepted).toEqual(recent);
  expect(byAge.calls).toEqual(["GET /messages 200", "GET /messages 200", "GET /messages 200"]);
  expect(byAge.result.skipped).toBeGreaterThan(0);
  expect(byAge.result.gap).toMatchObject({ replayedMessages: 1500 });

  // The newest 1,000 in one page back, the one read past them showing that more were missed.
  const byCount = await run({ maxMessages: 999, maxAgeMs: 24 * HOUR });
  expect(byCount.accepted).toEqual(recent.slice(-999));
  expect(byCount.calls).toEqual(["GET /messages 200", "GET /messages 200"]);
  // Skipped: the one read past them, and the 1,000 oldest the first read forward held.
  expect(byCount.result).toMatchObject({ replayed: 999, skipped: 1001 });

  // 1,500 missed, all within the limits: the read forward holds the oldest 1,000, one page back
  // the rest, down to them.
  const between = await run({ maxMessages: 5000, maxAgeMs: HOUR }, lastOld);
  expect(between.accepted).toEqual(recent);
  expect(between.calls).toEqual(["GET /messages 200", "GET /messages 200"]);
  expect(between.result).toMatchObject({ replayed: 1500, skipped: 0 });

  // Every call went through the client's budget, and none was refused.
  expect(client.budget.other.calls).toBe(7);
  expect(s.control.rateLimitCount(BOT, "other")).toEqual({ calls: 7, refused: 0 });
});

it("reads a few missed messages in one call that carries them alone, not the history before the cursor", async () => {
  const pages: unknown[] = [];
  const s = await startSandbox({
    onResponse: (r) => r.route === "/messages" && r.method === "GET" && pages.push(r.body),
  });
  sandbox = s;
  s.control.createUser({ email: BOT, full_name: "Catch-up", bot: "generic", owner: "owner@sandbox.example" });
  const send = (content: string) => s.control.sendAs(MEMBER, { type: "private", to: [BOT], content }).id;
  // A long history the bot handled, then three messages while its queue was lost.
  let handled = 0;
  for (let i = 0; i < 1500; i++) handled = send(`handled ${i}`);
  const missed = [send("missed 1"), send("missed 2"), send("missed 3")];

  const ledger = await DeliveryLedger.open(new MemoryStore());
  await ledger.baseline(handled);
  const accepted: number[] = [];
  const result = await catchUp(
    {
      client: createClient({ url: s.url, email: BOT, apiKey: s.control.apiKeyOf(BOT) }),
      ledger,
      narrow: undefined,
      limits: { maxMessages: 1000, maxAgeMs: HOUR },
      eventTypes: ["message"],
      reason: "queue_expired",
      since: undefined,
      now: Date.now(),
      signal: new AbortController().signal,
      accept: (m: Message) => accepted.push(m.id) > 0,
    },
    false,
  );

  expect(accepted).toEqual(missed);
  expect(result).toMatchObject({ replayed: 3, skipped: 0 });
  expect(pages).toHaveLength(1);
  expect((pages[0] as { messages: Message[] }).messages.map((m) => m.id)).toEqual(missed);
});
