import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { TrackedHelper } from "../effects/context-helpers.ts";
import type { ScheduleApi } from "../effects/schedule/schedule-api.ts";
import type { ContextFor, ErrorHandler, EventName, Middleware } from "../pipeline/composer.ts";
import type { BaseContext, BotContext, JobContext, WebhookContext } from "../pipeline/context.ts";
import type { Filter, FilterPredicate } from "../pipeline/filters.ts";
import type { CronOptions, RecurringAnnouncement } from "../scheduler/declarations.ts";
import type { KV } from "../state/kv.ts";
import type { WebhookOptions } from "../webhook/webhook-runtime.ts";
import type { ArgShape, CommandContext, CommandOptions, ParsedArgs } from "./commands/command-spec.ts";

type NoArgs = Record<never, never>;

export type { CronOptions, RecurringAnnouncement } from "../scheduler/declarations.ts";
export type { WebhookOptions, WebhookVerify } from "../webhook/webhook-runtime.ts";

/**
 * What a bot's `setup(bot, settings)` receives: its router, timers, webhooks, name, logger, client and state.
 *
 * @example
 * ```ts
 * setup(bot) {
 *   bot.on("message", { direct: true }, (ctx) => ctx.reply("pong"));
 *   bot.recurring("standup", { cron: "0 9 * * 1-5", timezone: "Europe/Berlin", to: "team", topic: "standup", content: "Standup time!" });
 *   bot.cron("*\/15 * * * *", (ctx) => ctx.log.info("tick"));
 *   bot.webhook("deploys", { verify: { type: "bearer", token: "…" } }, (ctx) => ctx.send({ type: "channel", to: "ops", topic: "deploys", content: "shipped" }));
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
  /** One-shot scheduled messages: book, list, cancel, reschedule (also `ctx.schedule` in handlers). */
  readonly schedule: ScheduleApi<{ scheduledMessageId: number }>;
  /**
   * Handle events of `type` (or several types; `"*"` for every typed event, `"unknown"` for events
   * this version does not know or that failed their schema).
   */
  on<T extends EventName>(type: T | readonly T[], handler: Middleware<ContextFor<BotContext<S>, T>>): this;
  /** Handle events of `type` that pass `filter` (channel, topic, sender, direct, mentioned, contains, op). */
  on<T extends EventName>(
    type: T | readonly T[],
    filter: Filter<ContextFor<BotContext<S>, T>> | FilterPredicate<ContextFor<BotContext<S>, T>>,
    handler: Middleware<ContextFor<BotContext<S>, T>>,
  ): this;
  /**
   * A command: a message addressed to the bot (a direct message or a mention) or starting with the
   * config's `command_prefix`, whose first word is `name`. Arguments and options are parsed and
   * validated by their zod schemas before `handler` runs; a mistake is answered with the usage.
   * A `help` command is generated unless the bot declares one. A name of two words declares a
   * subcommand of a command declared before it (`"standup skip"`), with its own arguments and
   * `allow`. See docs/guide/commands.md.
   *
   * @example
   * ```ts
   * bot.command("remind", {
   *   description: "remind you in a few minutes",
   *   args: { minutes: z.number().int().min(1).max(1440), text: z.string() },
   *   rest: true,
   * }, (ctx) => ctx.schedule.at({ ...ctx.where, content: ctx.args.text, at: Date.now() + ctx.args.minutes * 60_000 }));
   * bot.command("stats", { allow: "moderator" }, (ctx) => ctx.reply("…"));
   * bot.command("stats reset", { allow: "admin" }, (ctx) => ctx.reply("reset"));
   * ```
   */
  command<A extends ArgShape = NoArgs, O extends ArgShape = NoArgs>(
    name: string,
    options: CommandOptions<CommandContext<S, ParsedArgs<A>, ParsedArgs<O>>, A, O>,
    handler: (ctx: CommandContext<S, ParsedArgs<A>, ParsedArgs<O>>) => unknown,
  ): this;
  command(name: string, handler: (ctx: CommandContext<S, NoArgs, NoArgs>) => unknown): this;
  /** Middleware that sees every event: `(ctx, next) => …`. */
  use(...middleware: Middleware<BotContext<S>>[]): this;
  /**
   * See errors thrown by this bot's handlers. It observes: the failure still goes through retries
   * and dead letters once it returns. To stop that, throw `NoRetry` from it (`deadLetter: false`
   * when the failure is fully handled and nothing should be kept).
   */
  catch(handler: ErrorHandler<BotContext<S>>): this;
  /** Keep the next occurrence of an announcement booked on the server (delivered even while we are down). */
  recurring(id: string, announcement: RecurringAnnouncement): this;
  /**
   * Run `handler` on a cron schedule, in this process (for work computed at fire time). Without
   * options the expression is read in UTC, runs missed while the bot was down are skipped, and
   * the run history is stored under the expression and time zone.
   */
  cron(expression: string, options: CronOptions, handler: (ctx: JobContext<S>) => unknown): this;
  cron(expression: string, handler: (ctx: JobContext<S>) => unknown): this;
  /**
   * Serve an inbound webhook at `/webhooks/<bot>/<name>` (needs `http.listen` in the config). The
   * name, handler and options are checked here: a wrong one throws `BOT_SETUP_INVALID`.
   */
  webhook(name: string, options: WebhookOptions, handler: (ctx: WebhookContext<S>) => unknown): this;
  /**
   * Keep helper caches fresh from events by subscribing the bot's queue to their event types:
   * `"snippets"` (saved_snippets), `"users"` (realm_user), `"typing"` (typing, needed by
   * `ctx.typing.who()`), `"groups"` (user_group, for `ctx.groups`), `"reactions"` (reaction: a
   * prompt's emoji choices are answered by them; untracked, the queue is renewed with them at the
   * first such prompt). Untracked caches still work, re-fetching after
   * a minute, except `ctx.groups`, which knows no group untracked.
   */
  track(...helpers: TrackedHelper[]): this;
  /**
   * Run `handler` once the bot has started (its queue registered), in the background, e.g. to
   * bring the server's state in line with the settings. Errors are logged; the bot keeps running.
   */
  onStart(handler: (ctx: BaseContext<S>) => unknown): this;
}
