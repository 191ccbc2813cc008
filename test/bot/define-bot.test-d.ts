/**
 * Type-level tests of defineBot (checked by tsc): settings are inferred from the schema.
 */
import { expectTypeOf } from "vitest";
import { z } from "zod";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { type BotDefinition, defineBot } from "../../src/bot/define-bot.ts";

// Settings typed from the schema's output (defaults make fields required).
defineBot({
  settings: z.object({ greeting: z.string().default("hi"), limit: z.number().optional() }),
  setup(bot, settings) {
    expectTypeOf(bot).toEqualTypeOf<BotApi<{ greeting: string; limit?: number | undefined }>>();
    expectTypeOf(settings).toEqualTypeOf<{ greeting: string; limit?: number | undefined }>();
  },
});

// No schema: no settings.
defineBot({
  events: ["message", "reaction"],
  setup(_bot, settings) {
    expectTypeOf(settings).toEqualTypeOf<undefined>();
  },
});

// A custom bot type.
defineBot<undefined, { say(text: string): void }>({
  setup(bot) {
    expectTypeOf(bot.say).toEqualTypeOf<(text: string) => void>();
  },
});

// Unknown event types are compile errors.
defineBot({
  // @ts-expect-error "mesage" is not an event type
  events: ["mesage"],
  setup() {},
});

// setup is required.
// @ts-expect-error setup is missing
defineBot({ events: ["message"] });

// A plain object satisfies the general type the runtime works with.
const plain = { setup(): void {} };
expectTypeOf(plain).toExtend<BotDefinition>();
expectTypeOf(defineBot({ settings: z.object({ a: z.string() }), setup() {} })).toExtend<BotDefinition>();

// A recurring announcement's topic: a text, a template, or a function of the occurrence.
defineBot({
  setup(bot) {
    bot.recurring("standup", {
      cron: "30 9 * * 1-5",
      timezone: "Europe/Berlin",
      to: "team",
      topic: (occurrence, local) => {
        expectTypeOf(occurrence).toEqualTypeOf<Date>();
        expectTypeOf(local).toEqualTypeOf<{ date: string; weekday: string; time: string }>();
        return `standup ${local.date}`;
      },
      content: "Standup time!",
    });
  },
});
