/** Catch-up after a new queue: what was missed since the ledger's cursor, within the replay limits. */
import { expect, it } from "vitest";
import type { Client } from "../../src/api/create-client.ts";
import { catchUp } from "../../src/events/catch-up.ts";
import type { DeliveryLedger } from "../../src/pipeline/delivery-ledger.ts";
import type { Message } from "../../src/wire/records.ts";

it("replays the newest messages within the limits, counts the rest as skipped, and reports a gap", async () => {
  const now = Math.floor(Date.now() / 1000);
  // Ids 11-15 were missed; 11 and 12 are older than max_age.
  const missed = [11, 12, 13, 14, 15].map((id) => ({ id, timestamp: id <= 12 ? now - 7200 : now - 60 }));
  const requests: Record<string, unknown>[] = [];
  const client = {
    messages: {
      get: async (params: Record<string, unknown>) => {
        requests.push(params);
        const from = params.anchor as number;
        return { messages: missed.filter((m) => m.id >= from), found_newest: true, found_oldest: false };
      },
    },
  } as unknown as Client;
  const accepted: number[] = [];
  const result = await catchUp(
    {
      client,
      ledger: { cursor: 10 } as DeliveryLedger,
      narrow: undefined,
      limits: { maxMessages: 2, maxAgeMs: 3_600_000 },
      eventTypes: ["message", "reaction"],
      reason: "queue_expired",
      since: 1234,
      signal: new AbortController().signal,
      accept: (m: Message) => accepted.push(m.id) > 0 && m.id !== 15,
    },
    false,
  );
  expect(requests).toMatchObject([{ anchor: 11, num_before: 0, apply_markdown: false }]);
  expect(accepted).toEqual([14, 15]);
  expect(result).toMatchObject({ replayed: 1, skipped: 3 });
  expect(result.gap).toMatchObject({
    type: "gap",
    reason: "queue_expired",
    since: 1234,
    eventTypes: ["reaction"],
    replayedMessages: 1,
    skippedMessages: 3,
  });
});
