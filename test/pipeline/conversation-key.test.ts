import { describe, expect, it } from "vitest";
import { ConversationKeys, channelKey, conversationKey, dmKey } from "../../src/pipeline/conversation-key.ts";
import type { EventMap } from "../../src/wire/events.ts";

import {
  channelDelete,
  channelMessage,
  channelTyping,
  contentEdit,
  directDelete,
  directMessage,
  directTyping,
  reaction,
  subscriptionAdd,
  topicMove,
} from "../support/pipeline.ts";

describe("conversationKey", () => {
  it("keys messages and typing by channel + lowercased topic, or by DM participants", () => {
    expect(conversationKey(channelMessage())).toBe("channel:5:ticket-7");
    expect(conversationKey(channelMessage({ subject: "TICKET-7" }))).toBe("channel:5:ticket-7");
    expect(conversationKey(channelTyping())).toBe("channel:5:ticket-7");
    expect(conversationKey(directMessage())).toBe("dm:8,50");
    expect(conversationKey(directTyping())).toBe("dm:8,50");
  });

  it("keys edits, deletes and reactions by what they carry, else by message", () => {
    expect(conversationKey(topicMove())).toBe("channel:5:ticket-7"); // the conversation it left
    expect(conversationKey(channelDelete())).toBe("channel:5:ticket-7");
    expect(conversationKey(contentEdit())).toBe("msg:42");
    expect(conversationKey(reaction())).toBe("msg:42");
    expect(conversationKey(directDelete())).toBe("msg:43");
    expect(conversationKey(reaction(), (id) => (id === 42 ? "channel:5:ticket-7" : undefined))).toBe(
      "channel:5:ticket-7",
    );
  });

  it("puts every other event on the shared bot key", () => {
    expect(conversationKey(subscriptionAdd())).toBe("bot");
    const gap: EventMap["gap"] = {
      type: "gap",
      reason: "watchdog",
      since: 1,
      eventTypes: ["reaction"],
      replayedMessages: 0,
      skippedMessages: 0,
    };
    expect(conversationKey(gap)).toBe("bot");
  });
});

describe("ConversationKeys", () => {
  it("orders a message's edits and reactions with its conversation, and follows moves", () => {
    const keys = new ConversationKeys();
    expect(keys.keyOf(channelMessage())).toBe("channel:5:ticket-7");
    expect(keys.keyOf(contentEdit())).toBe("channel:5:ticket-7");
    expect(keys.keyOf(reaction())).toBe("channel:5:ticket-7");
    expect(keys.keyOf(topicMove())).toBe("channel:5:ticket-7");
    expect(keys.keyOf(reaction())).toBe("channel:6:resolved tickets");
    expect(keys.keyOf(directMessage())).toBe("dm:8,50");
    expect(keys.keyOf(directDelete())).toBe("dm:8,50");
    expect(keys.keyOf(reaction())).toBe("channel:6:resolved tickets");
    keys.keyOf(channelDelete()); // forgets 41 and 42
    expect(keys.keyOf(reaction())).toBe("msg:42");
  });

  it("forgets the oldest messages beyond its capacity, however many pass through", () => {
    const keys = new ConversationKeys(2);
    keys.keyOf(channelMessage({ id: 1, subject: "a" }));
    keys.keyOf(channelMessage({ id: 2, subject: "b" }));
    keys.keyOf(channelMessage({ id: 3, subject: "c" }));
    const reactTo = (id: number) => keys.keyOf({ ...reaction(), message_id: id });
    expect([reactTo(1), reactTo(2), reactTo(3)]).toEqual(["msg:1", "channel:5:b", "channel:5:c"]);
    for (let id = 4; id <= 50_000; id++) keys.keyOf(channelMessage({ id, subject: `t${id % 7}` }));
    expect([reactTo(3), reactTo(49_999), reactTo(50_000)]).toEqual([
      "msg:3",
      `channel:5:t${49_999 % 7}`,
      `channel:5:t${50_000 % 7}`,
    ]);
  });
});

describe("channelKey and dmKey", () => {
  it("give the same keys from the memo as built fresh, past the memo's size too", () => {
    for (let i = 0; i < 25_000; i++) {
      const topic = `Topic ${i % 12_000}`;
      expect(channelKey(i % 7, topic)).toBe(`channel:${i % 7}:topic ${i % 12_000}`);
    }
    expect(channelKey(3, "Release PLAN")).toBe(channelKey(3, "release plan"));
    expect(channelKey(3, "plan")).not.toBe(channelKey(4, "plan"));
  });

  it("orders direct-message participants the same with two or more", () => {
    expect(dmKey([9, 4])).toBe("dm:4,9");
    expect(dmKey([4, 9])).toBe("dm:4,9");
    expect(dmKey([7, 7])).toBe("dm:7");
    expect(dmKey([9, 4, 4, 1])).toBe("dm:1,4,9");
  });

  it("keeps two-person keys right past the memo's size, in either order", () => {
    for (let i = 0; i < 25_000; i++) {
      const a = 1 + (i % 13_000);
      const b = 20_000 + (i % 7);
      expect(dmKey(i % 2 === 0 ? [a, b] : [b, a])).toBe(`dm:${a},${b}`);
      expect(dmKey([a, a])).toBe(`dm:${a}`);
    }
  });
});
