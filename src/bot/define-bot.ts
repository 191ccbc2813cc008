import type { z } from "zod";
import type { KnownEventType } from "../wire/events.ts";
import type { BotApi } from "./bot-api.ts";

/** An event type a bot can subscribe to (the server's names, e.g. `"message"`, `"reaction"`). */
export type EventType = KnownEventType;

/** The settings a bot's `setup` receives: the output of its schema, or `undefined` without one. */
export type SettingsOf<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * A bot: what it subscribes to, the settings it accepts, and how it sets itself up.
 *
 * @typeParam S - the zod schema of `settings:` in the config (none: the bot takes no settings)
 * @typeParam B - what `setup` receives (the runtime's {@link BotApi})
 */
export interface BotDefinition<
  S extends z.ZodType | undefined = z.ZodType | undefined,
  B = BotApi<SettingsOf<S>>,
> {
  /** Event types to subscribe to, unless the config's `events:` says otherwise. */
  readonly events?: readonly EventType[];
  /** A zod schema for the bot's `settings:` block; problems are reported at their config line. */
  readonly settings?: S;
  /** Called once per configured bot with its own `bot` and validated settings. */
  setup(bot: B, settings: SettingsOf<S>): void | Promise<void>;
}

/**
 * Declares a bot. It returns its argument unchanged; it exists so `settings` in `setup` is typed
 * from the schema. A plain object with the same shape works too.
 *
 * @example
 * ```ts
 * import { defineBot } from "bothost";
 * import { z } from "zod";
 *
 * export default defineBot({
 *   events: ["message"],
 *   settings: z.object({ greeting: z.string().default("Hello") }),
 *   setup(bot, settings) {
 *     // settings.greeting is a string here
 *   },
 * });
 * ```
 */
export function defineBot<S extends z.ZodType | undefined = undefined, B = BotApi<SettingsOf<S>>>(
  definition: BotDefinition<S, B>,
): BotDefinition<S, B> {
  return definition;
}
