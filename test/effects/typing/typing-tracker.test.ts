import { describe, expect, it } from "vitest";
import { serverInfoFrom } from "../../../src/api/server-info.ts";
import {
  conversationKey,
  type TypingConversation,
  type TypingEvent,
  TypingTracker,
  typingConversation,
} from "../../../src/effects/typing/typing-tracker.ts";
import { parseEvent } from "../../../src/wire/events.ts";
import type { RegisterResponse } from "../../../src/wire/responses.ts";
import { ManualClock } from "../../support/manual-clock.ts";

const user = (id: number) => ({ user_id: id, email: `user${id}@example.org` });
let nextId = 0;

/** A typing event as it comes off the wire, parsed by the wire schema the runtime uses. */
function wire(raw: Record<string, unknown>): TypingEvent {
  const parsed = parseEvent({ type: "typing", id: nextId++, ...raw });
  if (!parsed.known || parsed.event.type !== "typing")
    throw new Error(`bad typing fixture: ${JSON.stringify(raw)}`);
  return parsed.event;
}
const dm = (op: "start" | "stop", sender: number, others: number[]) =>
  wire({ op, message_type: "direct", sender: user(sender), recipients: [...others, sender].map(user) });
const stream = (op: "start" | "stop", sender: number, topic = "deploys", channelId = 5) =>
  wire({ op, message_type: "stream", sender: user(sender), stream_id: channelId, topic });

const DM_8_10: TypingConversation = { type: "direct", userIds: [8, 10] };
const DEPLOYS: TypingConversation = { type: "channel", channelId: 5, topic: "deploys" };

function setup(options: { expiryMs?: number; ignoreUserIds?: number[] } = {}) {
  const clock = new ManualClock(0);
  const tracker = new TypingTracker({ clock, ...options });
  return { clock, tracker };
}

describe("TypingTracker: one test per row of the seed's state table", () => {
  it("not displayed + start → displayed (indicator shown)", () => {
    const { clock, tracker } = setup();
    tracker.handle(dm("start", 10, [8]));
    expect(tracker.typingIn(DM_8_10)).toEqual([10]);
    expect(tracker.isTyping(10, DM_8_10)).toBe(true);
    expect(clock.pendingTimers).toBe(1);
  });

  it("displayed + start → displayed, expiry timer restarts", async () => {
    const { clock, tracker } = setup({ expiryMs: 45_000 });
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(40_000);
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(40_000); // 80 s after the first start, 40 s after the second
    expect(tracker.typingIn(DM_8_10)).toEqual([10]);
    expect(clock.pendingTimers).toBe(1);
  });

  it("displayed + stop → not displayed", async () => {
    const { clock, tracker } = setup();
    tracker.handle(stream("start", 8));
    await clock.tick(1_000);
    expect(tracker.isTyping(8, DEPLOYS)).toBe(true);
    tracker.handle(stream("stop", 8));
    expect(tracker.typingIn(DEPLOYS)).toEqual([]);
    expect(tracker.isTyping(8)).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("displayed + expiry period passes with no new start → not displayed", async () => {
    const { clock, tracker } = setup({ expiryMs: 45_000 });
    tracker.handle(stream("start", 8));
    await clock.tick(44_999);
    expect(tracker.isTyping(8, DEPLOYS)).toBe(true);
    await clock.tick(1);
    expect(tracker.isTyping(8, DEPLOYS)).toBe(false);
    expect(tracker.typingIn(DEPLOYS)).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("TypingTracker details", () => {
  it("a restarted expiry counts from the latest start", async () => {
    const { clock, tracker } = setup({ expiryMs: 45_000 });
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(30_000);
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(30_000);
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(44_999);
    expect(tracker.isTyping(10)).toBe(true);
    await clock.tick(1); // 105 s: 45 s after the latest start
    expect(tracker.isTyping(10)).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("stop for someone not displayed changes nothing", () => {
    const { clock, tracker } = setup();
    tracker.handle(stream("start", 8));
    tracker.handle(dm("stop", 10, [8]));
    expect(tracker.isTyping(10)).toBe(false);
    expect(tracker.typingIn(DEPLOYS)).toEqual([8]);
    expect(clock.pendingTimers).toBe(1);
  });

  it("tracks each (conversation, sender) separately", async () => {
    const { clock, tracker } = setup({ expiryMs: 45_000 });
    tracker.handle(stream("start", 8));
    await clock.tick(20_000);
    tracker.handle(stream("start", 9));
    tracker.handle(stream("start", 8, "other topic"));
    expect(tracker.typingIn(DEPLOYS)).toEqual([8, 9]);
    await clock.tick(25_000); // 8's first indicator expires; 8 in "other topic" and 9 remain
    expect(tracker.typingIn(DEPLOYS)).toEqual([9]);
    expect(tracker.isTyping(8)).toBe(true);
    expect(tracker.isTyping(8, DEPLOYS)).toBe(false);
  });

  it("stream topics match case-insensitively; direct conversations ignore recipient order", () => {
    const { tracker } = setup();
    tracker.handle(stream("start", 8, "Deploys"));
    expect(tracker.typingIn({ type: "channel", channelId: 5, topic: "DEPLOYS" })).toEqual([8]);
    expect(tracker.typingIn({ type: "channel", channelId: 6, topic: "deploys" })).toEqual([]);
    tracker.handle(
      wire({ op: "start", message_type: "direct", sender: user(3), recipients: [user(9), user(3), user(1)] }),
    );
    expect(tracker.typingIn({ type: "direct", userIds: [9, 1, 3] })).toEqual([3]);
    expect(tracker.typingIn({ type: "direct", userIds: [1, 3] })).toEqual([]);
  });

  it("ignores the bot's own typing events and stream events without a topic", () => {
    const { clock, tracker } = setup({ ignoreUserIds: [10] });
    tracker.handle(dm("start", 10, [8]));
    tracker.handle(wire({ op: "start", message_type: "stream", sender: user(8), stream_id: 5 }));
    expect(tracker.isTyping(10)).toBe(false);
    expect(tracker.isTyping(8)).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("expiry defaults to 45000 ms", () => {
    expect(new TypingTracker().expiryMs).toBe(45_000);
    expect(new TypingTracker({ expiryMs: 5_000 }).expiryMs).toBe(5_000);
  });

  it("dispose() clears timers and state", async () => {
    const { clock, tracker } = setup();
    tracker.handle(dm("start", 10, [8]));
    tracker.handle(stream("start", 8));
    tracker.dispose();
    expect(clock.pendingTimers).toBe(0);
    expect(tracker.isTyping(10)).toBe(false);
    expect(tracker.isTyping(8)).toBe(false);
  });
});

describe("typing conversation and timings", () => {
  it("a direct conversation includes the sender even if the event omits it", () => {
    const event = wire({ op: "start", message_type: "direct", sender: user(10), recipients: [user(8)] });
    expect(typingConversation(event)).toEqual({ type: "direct", userIds: [8, 10] });
    expect(conversationKey({ type: "direct", userIds: [10, 8, 10] })).toBe("direct:8,10");
    expect(conversationKey({ type: "channel", channelId: 5, topic: "Lunch" })).toBe("channel:5:lunch");
  });

  it("serverInfoFrom reads the typing timings, else the current or pre-FL 204 defaults", () => {
    const timings = (reg: Partial<RegisterResponse>) =>
      serverInfoFrom({ zulip_version: "11.0", zulip_feature_level: 400, ...reg } as RegisterResponse).typing;
    expect(timings({})).toEqual({
      startedExpiryMs: 45_000,
      stoppedWaitMs: 12_000,
      startedWaitMs: 30_000,
    });
    expect(timings({ zulip_feature_level: 150 })).toEqual({
      startedExpiryMs: 15_000,
      stoppedWaitMs: 5_000,
      startedWaitMs: 10_000,
    });
    expect(
      timings({
        server_typing_started_expiry_period_milliseconds: 20_000,
        server_typing_stopped_wait_period_milliseconds: 6_000,
        server_typing_started_wait_period_milliseconds: 9_000,
      }),
    ).toEqual({ startedExpiryMs: 20_000, stoppedWaitMs: 6_000, startedWaitMs: 9_000 });
  });
});
