/**
 * What a bot's `setup(bot, settings)` receives: its router (`on`, `use`, `catch`), and its
 * name, logger, client and state for work outside handlers.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { BotContext } from "../daemon/context.ts";
import type { ContextFor, ErrorHandler, EventName, Middleware } from "../router/composer.ts";
import type { Filter, FilterPredicate } from "../router/filters.ts";
import type { KV } from "../state/kv.ts";

/**
 * @example
 * ```ts
 * setup(bot) {
 *   bot.on("message", { direct: true }, (ctx) => ctx.reply("pong"));
 *   bot.on("reaction", { op: "add" }, (ctx) => ctx.log.info({ emoji: ctx.event.emoji_name }, "reacted"));
 *   bot.use(async (ctx, next) => { await next(); });
 *   bot.catch((err, ctx) => ctx.log.error({ err }, "handler failed"));
 * }
 * ```
 */
export interface BotApi<S = unknown> {
  /** The bot's name in the config. */
  readonly name: string;
  readonly log: Logger;
  /** The bot's client (usable once the bot has started). */
  readonly api: Client;
  /** The bot's own key-value store. */
  readonly state: KV;
  /** Handle events of `type` (or several types; `"*"` for all). */
  on<T extends EventName>(type: T | readonly T[], handler: Middleware<ContextFor<BotContext<S>, T>>): this;
  /** Handle events of `type` that pass `filter` (channel, topic, sender, direct, mentioned, contains, op). */
  on<T extends EventName>(
    type: T | readonly T[],
    filter: Filter<ContextFor<BotContext<S>, T>> | FilterPredicate<ContextFor<BotContext<S>, T>>,
    handler: Middleware<ContextFor<BotContext<S>, T>>,
  ): this;
  /** Middleware that sees every event: `(ctx, next) => …`. */
  use(...middleware: Middleware<BotContext<S>>[]): this;
  /** Handle errors thrown by this bot's handlers (otherwise they are logged with their context). */
  catch(handler: ErrorHandler<BotContext<S>>): this;
}
