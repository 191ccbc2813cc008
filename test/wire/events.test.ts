import { describe, expect, it } from "vitest";
import { parseEvent } from "../../src/wire/events.ts";

describe("parseEvent", () => {
  it("validates a known event type and keeps unknown fields", () => {
    const parsed = parseEvent({ id: 3, type: "heartbeat", extra: 1 });
    expect(parsed).toEqual({ known: true, event: { id: 3, type: "heartbeat", extra: 1 } });
  });

  it("keeps an unknown event type as a generic event", () => {
    const parsed = parseEvent({ id: 9, type: "future_thing", op: "add", payload: [1] });
    expect(parsed).toEqual({ known: false, event: { id: 9, type: "future_thing", op: "add", payload: [1] } });
  });

  it("keeps a known type with a malformed payload as generic and says why", () => {
    const parsed = parseEvent({ id: 4, type: "reaction", op: "add" });
    expect(parsed.known).toBe(false);
    if (parsed.known) return;
    expect(parsed.event).toMatchObject({ id: 4, type: "reaction" });
    expect(parsed.issue).toContain("message_id");
  });

  it("reports an event without id or type", () => {
    const parsed = parseEvent({ type: 5 });
    expect(parsed).toMatchObject({ known: false, issue: "event has no integer id or string type" });
  });

  it("parses each op of scheduled_messages", () => {
    const sm = {
      scheduled_message_id: 1,
      type: "stream",
      to: 5,
      topic: "t",
      content: "c",
      rendered_content: "<p>c</p>",
      scheduled_delivery_timestamp: 1700000000,
      failed: false,
    };
    expect(parseEvent({ id: 1, type: "scheduled_messages", op: "add", scheduled_messages: [sm] }).known).toBe(
      true,
    );
    expect(parseEvent({ id: 2, type: "scheduled_messages", op: "update", scheduled_message: sm }).known).toBe(
      true,
    );
    expect(
      parseEvent({ id: 3, type: "scheduled_messages", op: "remove", scheduled_message_id: 1 }).known,
    ).toBe(true);
    expect(parseEvent({ id: 4, type: "scheduled_messages", op: "remove" }).known).toBe(false);
  });
});
