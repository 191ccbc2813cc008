/** The "event kept as unknown" warning: once a minute per event type, with what it left out. */
import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { UNKNOWN_EVENT_WARNING_MS, UnknownEventWarnings } from "../../src/events/unknown-events.ts";
import { createLogger } from "../../src/log/create-logger.ts";
import { ManualClock } from "../support/manual-clock.ts";

it("writes the first warning of a type at once and counts the rest of the minute into the next", async () => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    destination: new Writable({
      write: (chunk, _e, done) => done(void lines.push(JSON.parse(String(chunk)))),
    }),
    pretty: false,
    level: "info",
  });
  const clock = new ManualClock(0);
  const warnings = new UnknownEventWarnings(log, clock);
  for (let i = 0; i < 1_000; i++) warnings.note("message", "message.client: expected string");
  warnings.note("typing", "sender: required");
  expect(lines.map((l) => [l.eventType, l.notWritten])).toEqual([
    ["message", undefined],
    ["typing", undefined],
  ]);

  await clock.tickTo(UNKNOWN_EVENT_WARNING_MS - 1);
  warnings.note("message", "message.client: expected string");
  expect(lines).toHaveLength(2);
  await clock.tickTo(UNKNOWN_EVENT_WARNING_MS);
  warnings.note("message", "message.client: expected string");
  expect(lines[2]).toMatchObject({
    level: 40,
    eventType: "message",
    issue: "message.client: expected string",
    notWritten: 1_000,
    msg: "event kept as unknown (and 1000 more of this type since the last warning)",
  });
});
