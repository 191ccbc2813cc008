import { describe, expect, it } from "vitest";
import {
  conversationKey,
  type TypingChange,
  type TypingConversation,
  type TypingEvent,
  TypingTracker,
  typingConversation,
  typingTimings,
} from "../../../src/effects/typing/typing-tracker.ts";
import { parseEvent } from "../../../src/wire/events.ts";
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
const stream = (op: "start" | "stop", sender: number, topic = "deploys", streamId = 5) =>
  wire({ op, message_type: "stream", sender: user(sender), stream_id: streamId, topic });

const DM_8_10: TypingConversation = { type: "direct", userIds: [8, 10] };
const DEPLOYS: TypingConversation = { type: "stream", streamId: 5, topic: "deploys" };

function setup(options: { expiryMs?: number; featureLevel?: number; ignoreUserIds?: number[] } = {}) {
  const clock = new ManualClock(0);
  const tracker = new TypingTracker({ clock, ...options });
  const changes: string[] = [];
  tracker.onChange((c: TypingChange) =>
    changes.push(`${c.userId} ${c.typing ? "on" : "off"} (${c.reason})@${clock.now()}`),
  );
  return { clock, tracker, changes };
}

describe("TypingTracker: one test per row of the seed's state table", () => {
  it("not displayed + start → displayed (indicator shown)", () => {
    const { tracker, changes } = setup();
    expect(tracker.handle(dm("start", 10, [8]))).toBe(true);
    expect(tracker.typingIn(DM_8_10)).toEqual([10]);
    expect(tracker.isTyping(10, DM_8_10)).toBe(true);
    expect(changes).toEqual(["10 on (start)@0"]);
  });

  it("displayed + start → displayed, expiry timer restarts (no new change)", async () => {
    const { clock, tracker, changes } = setup({ expiryMs: 45_000 });
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(40_000);
    expect(tracker.handle(dm("start", 10, [8]))).toBe(false);
    await clock.tick(40_000); // 80 s after the first start, 40 s after the second
    expect(tracker.isTyping(10, DM_8_10)).toBe(true);
    expect(changes).toEqual(["10 on (start)@0"]);
  });

  it("displayed + stop → not displayed", async () => {
    const { clock, tracker, changes } = setup();
    tracker.handle(stream("start", 8));
    await clock.tick(1_000);
    expect(tracker.handle(stream("stop", 8))).toBe(true);
    expect(tracker.typingIn(DEPLOYS)).toEqual([]);
    expect(tracker.isTyping(8)).toBe(false);
    expect(changes).toEqual(["8 on (start)@0", "8 off (stop)@1000"]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("displayed + expiry period passes with no new start → not displayed", async () => {
    const { clock, tracker, changes } = setup({ expiryMs: 45_000 });
    tracker.handle(stream("start", 8));
    await clock.tick(44_999);
    expect(tracker.isTyping(8, DEPLOYS)).toBe(true);
    await clock.tick(1);
    expect(tracker.isTyping(8, DEPLOYS)).toBe(false);
    expect(changes).toEqual(["8 on (start)@0", "8 off (expired)@45000"]);
  });
});

describe("TypingTracker details", () => {
  it("a restarted expiry counts from the latest start", async () => {
    const { clock, tracker, changes } = setup({ expiryMs: 45_000 });
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(30_000);
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(30_000);
    tracker.handle(dm("start", 10, [8]));
    await clock.tick(44_999);
    expect(tracker.isTyping(10)).toBe(true);
    await clock.tick(1);
    expect(changes).toEqual(["10 on (start)@0", "10 off (expired)@105000"]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("stop for someone not displayed changes nothing", () => {
    const { tracker, changes } = setup();
    expect(tracker.handle(dm("stop", 10, [8]))).toBe(false);
    expect(changes).toEqual([]);
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
    expect(tracker.typingIn({ type: "stream", streamId: 5, topic: "DEPLOYS" })).toEqual([8]);
    expect(tracker.typingIn({ type: "stream", streamId: 6, topic: "deploys" })).toEqual([]);
    tracker.handle(
      wire({ op: "start", message_type: "direct", sender: user(3), recipients: [user(9), user(3), user(1)] }),
    );
    expect(tracker.typingIn({ type: "direct", userIds: [9, 1, 3] })).toEqual([3]);
    expect(tracker.typingIn({ type: "direct", userIds: [1, 3] })).toEqual([]);
  });

  it("ignores the bot's own typing events and stream events without a topic", () => {
    const { tracker, changes } = setup({ ignoreUserIds: [10] });
    expect(tracker.handle(dm("start", 10, [8]))).toBe(false);
    expect(tracker.handle(wire({ op: "start", message_type: "stream", sender: user(8), stream_id: 5 }))).toBe(
      false,
    );
    expect(changes).toEqual([]);
  });

  it("expiry defaults to 45000 ms, or 15000 ms for servers before feature level 204", () => {
    expect(new TypingTracker().expiryMs).toBe(45_000);
    expect(new TypingTracker({ featureLevel: 203 }).expiryMs).toBe(15_000);
    expect(new TypingTracker({ featureLevel: 204 }).expiryMs).toBe(45_000);
    expect(new TypingTracker({ expiryMs: 5_000, featureLevel: 100 }).expiryMs).toBe(5_000);
  });

  it("a throwing listener does not stop the others; unsubscribe works", () => {
    const errors: unknown[] = [];
    const tracker = new TypingTracker({ clock: new ManualClock(), onListenerError: (e) => errors.push(e) });
    const seen: number[] = [];
    tracker.onChange(() => {
      throw new Error("listener bug");
    });
    const off = tracker.onChange((c) => seen.push(c.userId));
    tracker.handle(dm("start", 10, [8]));
    off();
    tracker.handle(dm("stop", 10, [8]));
    expect(seen).toEqual([10]);
    expect(errors.map((e) => (e as Error).message)).toEqual(["listener bug", "listener bug"]);
  });

  it("dispose() clears timers, state and listeners without emitting", async () => {
    const { clock, tracker, changes } = setup();
    tracker.handle(dm("start", 10, [8]));
    tracker.handle(stream("start", 8));
    tracker.dispose();
    expect(clock.pendingTimers).toBe(0);
    expect(tracker.isTyping(10)).toBe(false);
    await clock.tick(60_000);
    tracker.handle(dm("start", 10, [8]));
    expect(changes).toEqual(["10 on (start)@0", "8 on (start)@0"]);
  });
});

describe("typing conversation and timings", () => {
  it("a direct conversation includes the sender even if the event omits it", () => {
    const event = wire({ op: "start", message_type: "direct", sender: user(10), recipients: [user(8)] });
    expect(typingConversation(event)).toEqual({ type: "direct", userIds: [8, 10] });
    expect(conversationKey({ type: "direct", userIds: [10, 8, 10] })).toBe("direct:8,10");
    expect(conversationKey({ type: "stream", streamId: 5, topic: "Lunch" })).toBe("stream:5:lunch");
  });

  it("typingTimings reads register values, else the current or pre-FL 204 defaults", () => {
    expect(typingTimings({})).toEqual({
      startedExpiryMs: 45_000,
      stoppedWaitMs: 12_000,
      startedWaitMs: 30_000,
    });
    expect(typingTimings({ zulip_feature_level: 150 })).toEqual({
      startedExpiryMs: 15_000,
      stoppedWaitMs: 5_000,
      startedWaitMs: 10_000,
    });
    expect(
      typingTimings({
        zulip_feature_level: 400,
        server_typing_started_expiry_period_milliseconds: 20_000,
        server_typing_stopped_wait_period_milliseconds: 6_000,
        server_typing_started_wait_period_milliseconds: 9_000,
      }),
    ).toEqual({ startedExpiryMs: 20_000, stoppedWaitMs: 6_000, startedWaitMs: 9_000 });
  });
});
