import { describe, expect, it } from "vitest";
import { isTypedEvent, parseEvent, reviveEvent } from "../../src/wire/events.ts";

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

describe("reviveEvent (a dead letter's event, typed again)", () => {
  const message = {
    id: 42,
    sender_id: 8,
    sender_email: "a@example.org",
    sender_full_name: "A",
    client: "website",
    content: "hi",
    recipient_id: 20,
    timestamp: 1_700_000_000,
    type: "stream",
    display_recipient: "general",
    stream_id: 5,
    subject: "t",
  };
  const stored = (v: unknown) => JSON.parse(JSON.stringify(v));

  it("types a gap and a message event bothost made (no id) as they were made", () => {
    const gap = {
      type: "gap",
      reason: "watchdog",
      eventTypes: ["reaction"],
      replayedMessages: 0,
      skippedMessages: 2,
    };
    const revived = reviveEvent(stored(gap));
    expect(revived).toEqual({ event: { ...gap, since: undefined }, issue: undefined });
    expect(isTypedEvent(revived.event, revived.issue)).toBe(true);
    const made = reviveEvent(stored({ type: "message", message, flags: [] }));
    expect(made.issue).toBeUndefined();
    expect(isTypedEvent(made.event, made.issue)).toBe(true);
    expect(made.event).not.toHaveProperty("id");
  });

  it("keeps a malformed message unknown, with the reason, so typed routes never see it", () => {
    const revived = reviveEvent(
      stored({ id: 3, type: "message", message: { ...message, sender_id: "8" }, flags: [] }),
    );
    expect(revived.issue).toContain("message.sender_id");
    expect(isTypedEvent(revived.event, revived.issue)).toBe(false);
    const idless = reviveEvent(stored({ type: "message", message: { id: 1 }, flags: [] }));
    expect(isTypedEvent(idless.event, idless.issue)).toBe(false);
  });
});
