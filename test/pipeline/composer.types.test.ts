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
import type { EventMap, GenericEvent, ServerEvent } from "../../src/wire/events.ts";

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
    });

    bot.on("future_thing", (ctx) => {
      expectTypeOf(ctx.event).toEqualTypeOf<GenericEvent>();
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
