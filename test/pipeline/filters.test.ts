import { describe, expect, it } from "vitest";
import type { RoutableContext } from "../../src/pipeline/composer.ts";
import { compileFilter, type Filter } from "../../src/pipeline/filters.ts";
import type { ServerEvent } from "../../src/wire/events.ts";
import {
  channelDelete,
  channelMessage,
  channelTyping,
  contentEdit,
  ctxFor,
  directDelete,
  directMessage,
  directTyping,
  reaction,
  subscriptionAdd,
  topicMove,
} from "../support/pipeline.ts";

/** Does `filter` (checked as for `on("*")`) let `event` through? */
async function passes(
  filter: Filter,
  event: ServerEvent,
  extra: Partial<RoutableContext> = {},
): Promise<boolean> {
  return compileFilter(filter, ["*"], 'on("*")')(ctxFor(event, extra));
}

function setupError(filter: unknown, types: string[] = ["message"]): string {
  try {
    compileFilter(filter as Filter, types, `on(${JSON.stringify(types[0])})`);
  } catch (err) {
    expect(err).toMatchObject({ name: "RouterError", code: "ROUTER_INVALID_FILTER" });
    return (err as Error).message;
  }
  throw new Error("expected a setup error");
}

describe("filters match realistic events", () => {
  it("op", async () => {
    expect(await passes({ op: "add" }, reaction("add"))).toBe(true);
    expect(await passes({ op: "add" }, reaction("remove"))).toBe(false);
    expect(await passes({ op: ["start", "stop"] }, directTyping())).toBe(true);
    expect(await passes({ op: "add" }, channelMessage())).toBe(false);
  });

  it("channel by name (case-insensitive) or id, across event types", async () => {
    expect(await passes({ channel: "support" }, channelMessage())).toBe(true);
    expect(await passes({ channel: 5 }, channelMessage())).toBe(true);
    expect(await passes({ channel: ["general", 6] }, channelMessage())).toBe(false);
    expect(await passes({ channel: "support" }, directMessage())).toBe(false);
    // A move matches the channel it left (by id or name) and the one it entered (by id).
    expect(await passes({ channel: "SUPPORT" }, topicMove())).toBe(true);
    expect(await passes({ channel: 6 }, topicMove())).toBe(true);
    expect(await passes({ channel: 5 }, channelDelete())).toBe(true);
    expect(await passes({ channel: 5 }, channelTyping())).toBe(true);
    expect(await passes({ channel: 5 }, reaction())).toBe(false);
  });

  it("channel names on id-only events resolve through ctx.channelName", async () => {
    expect(await passes({ channel: "support" }, channelDelete())).toBe(false);
    const channelName = (id: number) => (id === 5 ? "Support" : undefined);
    expect(await passes({ channel: "support" }, channelDelete(), { channelName })).toBe(true);
    expect(await passes({ channel: "support" }, channelTyping(), { channelName })).toBe(true);
    expect(await passes({ channel: "general" }, channelTyping(), { channelName })).toBe(false);
  });

  it("topic: exact but case-insensitive, or a RegExp, on each event's topic field", async () => {
    expect(await passes({ topic: "ticket-7" }, channelMessage())).toBe(true);
    expect(await passes({ topic: "ticket" }, channelMessage())).toBe(false);
    expect(await passes({ topic: /^Ticket-\d+$/ }, channelMessage())).toBe(true);
    expect(await passes({ topic: /^ticket-\d+$/ }, channelMessage())).toBe(false);
    expect(await passes({ topic: "resolved tickets" }, topicMove())).toBe(true); // new topic
    expect(await passes({ topic: "ticket-7" }, topicMove())).toBe(true); // old topic
    expect(await passes({ topic: "ticket-7" }, contentEdit())).toBe(false); // content edits carry no topic
    expect(await passes({ topic: "ticket-7" }, channelDelete())).toBe(true);
    expect(await passes({ topic: "TICKET-7" }, channelTyping())).toBe(true);
    expect(await passes({ topic: "" }, directMessage())).toBe(false); // DMs have no topic
  });

  it("a /g RegExp gives the same answer every time", async () => {
    const filter = { topic: /ticket/gi };
    for (let i = 0; i < 3; i++) expect(await passes(filter, channelMessage())).toBe(true);
  });

  it("sender by id or email (case-insensitive)", async () => {
    expect(await passes({ sender: 8 }, channelMessage())).toBe(true);
    expect(await passes({ sender: "iago@example.org" }, channelMessage())).toBe(true);
    expect(await passes({ sender: [9, "hamlet@example.org"] }, channelMessage())).toBe(false);
    expect(await passes({ sender: 9 }, topicMove())).toBe(true); // the editor
    expect(await passes({ sender: "hamlet@example.org" }, reaction())).toBe(true);
    expect(await passes({ sender: 10 }, channelTyping())).toBe(true);
    expect(await passes({ sender: 8 }, channelDelete())).toBe(false);
  });

  it("direct", async () => {
    expect(await passes({ direct: true }, directMessage())).toBe(true);
    expect(await passes({ direct: true }, channelMessage())).toBe(false);
    expect(await passes({ direct: false }, channelMessage())).toBe(true);
    expect(await passes({ direct: false }, directMessage())).toBe(false);
    expect(await passes({ direct: true }, directTyping())).toBe(true);
    expect(await passes({ direct: true }, channelTyping())).toBe(false);
    expect(await passes({ direct: true }, directDelete())).toBe(true);
    expect(await passes({ direct: true }, contentEdit({}))).toBe(true);
    expect(await passes({ direct: false }, contentEdit())).toBe(true);
    // Events that are neither direct nor channel messages match neither value.
    expect(await passes({ direct: true }, reaction())).toBe(false);
    expect(await passes({ direct: false }, reaction())).toBe(false);
  });

  it("mentioned, including wildcard mentions", async () => {
    expect(await passes({ mentioned: true }, channelMessage({ flags: ["mentioned"] }))).toBe(true);
    expect(
      await passes({ mentioned: true }, channelMessage({ flags: ["read", "topic_wildcard_mentioned"] })),
    ).toBe(true);
    expect(await passes({ mentioned: true }, channelMessage({ flags: ["stream_wildcard_mentioned"] }))).toBe(
      true,
    );
    expect(await passes({ mentioned: true }, channelMessage({ flags: ["read", "has_alert_word"] }))).toBe(
      false,
    );
    expect(await passes({ mentioned: false }, channelMessage({ flags: ["read"] }))).toBe(true);
    expect(await passes({ mentioned: true }, topicMove())).toBe(true);
  });

  it("contains: case-insensitive substring or RegExp, on message and edit content", async () => {
    expect(await passes({ contains: "TICKET 7" }, channelMessage())).toBe(true);
    expect(await passes({ contains: "ticket 8" }, channelMessage())).toBe(false);
    expect(await passes({ contains: /ticket \d/ }, channelMessage())).toBe(true);
    expect(await passes({ contains: ["nope", /^can/i] }, channelMessage())).toBe(true);
    expect(await passes({ contains: "deploy" }, contentEdit())).toBe(true);
    expect(await passes({ contains: "deploy" }, topicMove())).toBe(false); // no content in a move
  });

  it("keys combine with AND, then `when` runs last (and may be async)", async () => {
    const calls: (number | undefined)[] = [];
    const when = async (ctx: RoutableContext) => {
      calls.push(ctx.event.id);
      return ctx.event.id === 3;
    };
    expect(await passes({ channel: "support", topic: "ticket-7", sender: 8, when }, channelMessage())).toBe(
      true,
    );
    expect(await passes({ channel: "support", topic: "other", when }, channelMessage())).toBe(false);
    expect(calls).toEqual([3]); // not called once a key failed
    expect(await passes({ op: "add" }, subscriptionAdd())).toBe(true);
  });

  it("answers with a plain boolean unless `when` is async (the router's sync path relies on it)", async () => {
    const compile = (filter: Filter) => compileFilter(filter, ["*"], 'on("*")');
    expect(compile({ channel: "support" })(ctxFor(channelMessage()))).toBe(true);
    expect(compile({ channel: "general", when: async () => true })(ctxFor(channelMessage()))).toBe(false);
    expect(compile({ channel: "support", when: (ctx) => ctx.event.id === 3 })(ctxFor(channelMessage()))).toBe(
      true,
    );
    const pending = compile({ channel: "support", when: async () => true })(ctxFor(channelMessage()));
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toBe(true);
  });

  it("a plain predicate is a filter too", async () => {
    const filter = compileFilter((ctx) => ctx.event.type === "reaction", ["*"], 'on("*")');
    expect(await filter(ctxFor(reaction()))).toBe(true);
    expect(await filter(ctxFor(channelMessage()))).toBe(false);
  });

  it("undefined values are ignored (handy for optional settings)", async () => {
    expect(await passes({ channel: undefined, direct: true }, directMessage())).toBe(true);
  });
});

describe("filters are checked when on() is called", () => {
  it("rejects unknown keys, suggesting the closest valid one", () => {
    expect(setupError({ chanel: "x" })).toBe(
      'on("message"): unknown filter key "chanel". Did you mean "channel"? Valid keys: op, channel, topic, sender, direct, mentioned, contains, addressed, when.',
    );
    expect(setupError({ stream: "x" })).toBe(
      'on("message"): unknown filter key "stream". Valid keys: op, channel, topic, sender, direct, mentioned, contains, addressed, when.',
    );
  });

  it("rejects bad values, naming the key", () => {
    expect(setupError({ direct: "yes" })).toBe(
      'on("message"): filter "direct" must be true or false, got "yes".',
    );
    expect(setupError({ channel: [] })).toBe(
      'on("message"): filter "channel" is an empty array, which never matches; list at least one value or remove the key.',
    );
    expect(setupError({ channel: ["ok", 0] })).toBe(
      'on("message"): filter "channel" must be a channel name or id, or an array of them; got 0.',
    );
    expect(setupError({ sender: "iago" })).toBe(
      'on("message"): filter "sender" must be a user id or email, or an array of them; got "iago".',
    );
    expect(setupError({ topic: 5 })).toBe(
      'on("message"): filter "topic" must be a string or a RegExp, or an array of them; got 5.',
    );
    expect(setupError({ when: true })).toBe(
      'on("message"): filter "when" must be a function (ctx) => boolean, got true.',
    );
    expect(setupError(/x/)).toBe(
      'on("message"): the filter must be an object such as { channel: "general" } or a function (ctx) => boolean, got /x/.',
    );
    expect(setupError(null)).toContain("got null.");
  });

  it("rejects keys that can never match the routed event type", () => {
    expect(setupError({ op: "add" }, ["message"])).toBe(
      'on("message"): filter "op" can never match "message" events (they have no op). Remove it, or route those types separately.',
    );
    expect(setupError({ channel: "x" }, ["reaction"])).toBe(
      'on("reaction"): filter "channel" can never match "reaction" events (they carry no channel). Remove it, or route those types separately.',
    );
    expect(setupError({ contains: "x" }, ["message", "typing"])).toContain(
      'filter "contains" can never match "typing" events (they carry no message content).',
    );
    // Edits name their editor by id alone: an email there never matches.
    expect(setupError({ sender: ["ann@example.com", 7] }, ["message", "update_message"])).toBe(
      'on("message"): filter "sender" can never match "update_message" events by email ("ann@example.com"): they name the user by id alone. Give the user\'s id.',
    );
    expect(() => compileFilter({ sender: 7 }, ["update_message"], "on")).not.toThrow();
    // Unknown types and "*" cannot be checked ahead, so they are allowed.
    expect(() => compileFilter({ channel: "x", op: "y" }, ["future_event", "*"], "on")).not.toThrow();
  });
});
