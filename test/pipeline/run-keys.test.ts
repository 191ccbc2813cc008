/**
 * The read-back bound of a run of an event without a message id (src/pipeline/run-keys.ts): from
 * when its first run began, less the server's clock's slack; for a saved event run again after a
 * kill (events/saved-events.ts), from when it was kept, however long the daemon was down.
 */
import { expect, it } from "vitest";
import { SERVER_CLOCK_SLACK_S } from "../../src/effects/effect-records.ts";
import type { Incoming } from "../../src/pipeline/incoming.ts";
import { firstRecordsOf } from "../../src/pipeline/run-keys.ts";
import type { ServerEvent } from "../../src/wire/events.ts";

const reaction = {
  type: "reaction",
  id: 7,
  op: "add",
  user_id: 9,
  message_id: 42,
  emoji_name: "tada",
  emoji_code: "1f389",
  reaction_type: "unicode_emoji",
} as unknown as ServerEvent;

const incoming = (extra: Partial<Incoming> = {}): Incoming => ({
  event: reaction,
  replayed: false,
  issue: undefined,
  reply: undefined,
  queue: "q1",
  ...extra,
});

it("a first run is bounded from when it began", () => {
  const began = Date.UTC(2026, 11, 2, 12, 0, 0);
  expect(firstRecordsOf(incoming(), began)).toEqual({
    key: "q:q1/7",
    since: began / 1000 - SERVER_CLOCK_SLACK_S,
  });
});

it("a saved event run again at a start an hour after the kill is bounded from when it was kept", () => {
  const kept = Date.UTC(2026, 11, 2, 12, 0, 0);
  const restarted = kept + 3_600_000;
  expect(firstRecordsOf(incoming({ replayed: true, keptAt: kept }), restarted)).toEqual({
    key: "q:q1/7",
    since: kept / 1000 - SERVER_CLOCK_SLACK_S,
  });
});
