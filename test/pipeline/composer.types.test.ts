/**
 * Type-level tests: `tsc -p tsconfig.json` checks them (test/ is included), and vitest runs the
 * file too, so the one runtime assertion below keeps it a real test. A wrong type here fails
 * `npm run typecheck`; an unused `@ts-expect-error` fails it as well.
 */

import type { Logger as PinoLogger } from "pino";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Logger } from "../../src/api/logger.ts";
import type { RoutableContext } from "../../src/pipeline/composer.ts";
import { Composer, type ContextFor, type EventOf } from "../../src/pipeline/composer.ts";
import type { AnyEvent, EventMap, GapReason, ServerEvent, UnknownEvent } from "../../src/wire/events.ts";

interface AppContext extends RoutableContext {
  reply(text: string): Promise<void>;
}

describe("Composer types", () => {
  it("narrows ctx.event by the routed event type", () => {
    const bot = new Composer<AppContext>();

    bot.on("message", (ctx) => {
      expectTypeOf(ctx.event).toEqualTypeOf<EventMap["message"]>();
      expectTypeOf(ctx.event.message.content).toEqualTypeOf<string>();
      expectTypeOf(ctx.reply).toEqualTypeOf<(text: string) => Promise<void>>();
      expectTypeOf(ctx.event.type).toEqualTypeOf<"message">();
    });

    bot.on("reaction", { op: "add" }, (ctx) => {
      expectTypeOf(ctx.event.emoji_name).toEqualTypeOf<string>();
      expectTypeOf(ctx.event.op).toEqualTypeOf<"add" | "remove">();
    });

    bot.on(["message", "update_message"], (ctx) => {
      expectTypeOf(ctx.event).toEqualTypeOf<EventMap["message"] | EventMap["update_message"]>();
    });

    bot.on("*", (ctx) => {
      expectTypeOf(ctx.event).toEqualTypeOf<ServerEvent>();
      // Every typed event narrows by `type`, bothost's own `gap` included.
      switch (ctx.event.type) {
        case "message":
          expectTypeOf(ctx.event.message.subject).toEqualTypeOf<string>();
          break;
        case "reaction":
          expectTypeOf(ctx.event.op).toEqualTypeOf<"add" | "remove">();
          break;
        case "gap":
          expectTypeOf(ctx.event.skippedMessages).toEqualTypeOf<number>();
          break;
      }
    });

    bot.on("gap", (ctx) => {
      expectTypeOf(ctx.event.reason).toEqualTypeOf<GapReason>();
      expectTypeOf(ctx.event.eventTypes).toEqualTypeOf<string[]>();
      expectTypeOf(ctx.event.since).toEqualTypeOf<number | undefined>();
      // bothost makes gap events: they carry no fake queue id.
      expectTypeOf(ctx.event.id).toEqualTypeOf<undefined>();
      // @ts-expect-error a gap has no such field (its fields are typed, not `unknown`)
      ctx.event.replayed;
    });

    bot.on("future_thing", (ctx) => {
      expectTypeOf(ctx.event).toEqualTypeOf<UnknownEvent>();
    });

    bot.on("unknown", (ctx) => {
      expectTypeOf(ctx.event).toEqualTypeOf<UnknownEvent>();
      expectTypeOf(ctx.event.type).toEqualTypeOf<string>();
    });

    // Middleware sees every event, unknown ones too: it narrows only after isTypedEvent.
    bot.use((ctx) => {
      expectTypeOf(ctx.event).toEqualTypeOf<AnyEvent>();
    });

    bot.on("message", { when: (ctx) => ctx.event.message.sender_id === 8 }, async (ctx, next) => {
      expectTypeOf(next).toEqualTypeOf<() => Promise<void>>();
      await ctx.reply("hi");
    });

    bot.on(
      "message",
      async (ctx) => ctx.event.message.type === "private",
      () => {},
    );

    // Mistakes the compiler catches are also refused at runtime, for JavaScript users.
    // @ts-expect-error not a Filter key
    expect(() => bot.on("message", { chanel: "x" }, () => {})).toThrow('unknown filter key "chanel"');
    // @ts-expect-error direct takes a boolean
    expect(() => bot.on("message", { direct: "yes" }, () => {})).toThrow(
      'filter "direct" must be true or false',
    );
    // @ts-expect-error a reaction has no message
    bot.on("reaction", (ctx) => ctx.event.message.content);

    expectTypeOf<EventOf<"typing">>().toEqualTypeOf<EventMap["typing"]>();
    expectTypeOf<ContextFor<AppContext, "typing">["event"]>().toEqualTypeOf<EventMap["typing"]>();
  });

  it("accepts a pino logger as the context's log", () => {
    expectTypeOf<PinoLogger>().toExtend<Logger>();
    expect(new Composer()).toBeInstanceOf(Composer);
  });
});
