/**
 * Type-level tests of the event union: `tsc -p tsconfig.json` checks them (test/ is included) and
 * vitest runs the file, so a wrong type fails `npm run typecheck` and an unused
 * `@ts-expect-error` fails it too. The runtime assertions keep it a real test.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import {
  type AnyEvent,
  type EventMap,
  type GapEvent,
  isTypedEvent,
  parseEvent,
  type ServerEvent,
  type UnknownEvent,
} from "../../src/wire/events.ts";

/** The topic of a channel message, the reason of a gap: one `switch` narrows each case. */
function describe_(event: ServerEvent): string {
  switch (event.type) {
    case "message":
      expectTypeOf(event).toEqualTypeOf<EventMap["message"]>();
      return `message in ${event.message.subject}`;
    case "update_message":
      expectTypeOf(event.message_ids).toEqualTypeOf<number[]>();
      return `edit of ${event.message_id}`;
    case "scheduled_messages":
      // A union by `op` inside the union by `type`.
      if (event.op === "remove") return `unscheduled ${event.scheduled_message_id}`;
      return "scheduled";
    case "gap":
      expectTypeOf(event).toEqualTypeOf<GapEvent>();
      return `gap (${event.reason}): ${event.skippedMessages} skipped`;
    default:
      return event.type;
  }
}

describe("the event union", () => {
  it("narrows every typed event by its type, and keeps unknown events out of it", () => {
    const parsed = parseEvent({ id: 9, type: "future_thing", payload: 1 });
    const sort = (event: AnyEvent, issue: string | undefined): string => {
      if (isTypedEvent(event, issue)) {
        expectTypeOf(event).toEqualTypeOf<ServerEvent>();
        return describe_(event);
      }
      expectTypeOf(event).toEqualTypeOf<UnknownEvent>();
      return `unknown ${event.type}`;
    };
    expect(sort(parsed.event, undefined)).toBe("unknown future_thing");
    // An unknown event is not a typed one: it cannot be passed where a typed event is expected.
    // @ts-expect-error UnknownEvent is not part of ServerEvent
    const typed: ServerEvent = parsed.event as UnknownEvent;
    expect(typed.type).toBe("future_thing");

    const gap: GapEvent = {
      type: "gap",
      reason: "queue_expired",
      since: undefined,
      eventTypes: ["reaction"],
      replayedMessages: 2,
      skippedMessages: 1,
    };
    expect(describe_(gap)).toBe("gap (queue_expired): 1 skipped");
    expect(isTypedEvent(gap, undefined)).toBe(true);
    expect(isTypedEvent(parsed.event, undefined)).toBe(false);
  });

  it("types a bot's handlers: bot.on('message') and bot.on('gap')", () => {
    const bot = defineBot({
      setup(b) {
        b.on("message", (ctx) => {
          expectTypeOf(ctx.event.message.subject).toEqualTypeOf<string>();
          // Messages bothost fetched after a lost queue (or got by outgoing webhook) have no queue id.
          expectTypeOf(ctx.event.id).toEqualTypeOf<number | undefined>();
        });
        b.on("gap", (ctx) => {
          expectTypeOf(ctx.event.replayedMessages).toEqualTypeOf<number>();
          expectTypeOf(ctx.event.reason).toEqualTypeOf<
            "queue_expired" | "ack_rejected" | "watchdog" | "restart" | "event_types"
          >();
        });
        b.on("unknown", (ctx) => {
          expectTypeOf(ctx.event).toEqualTypeOf<UnknownEvent>();
        });
      },
    });
    expect(typeof bot.setup).toBe("function");
  });
});
