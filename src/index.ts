/**
 * bothost: what a bot author and an embedding program import. Everything else is internal.
 *
 * @example
 * ```ts
 * import { defineBot } from "bothost";
 * export default defineBot({
 *   setup(bot) {
 *     bot.on("message", { direct: true }, (ctx) => ctx.reply("pong"));
 *   },
 * });
 * ```
 */

// ── The client ───────────────────────────────────────────────────────────────────────────────
export { type Client, type ClientOptions, createClient } from "./api/create-client.ts";
// ── Errors a bot or an embedder catches ──────────────────────────────────────────────────────
export { ApiError, AuthError, GroupPermissionError, NetworkError, RateLimitError } from "./api/errors.ts";
export type { SendMessageParams } from "./api/resources/messages.ts";
// ── Writing a bot ────────────────────────────────────────────────────────────────────────────
export type { BotApi, CronOptions, RecurringAnnouncement, WebhookOptions } from "./bot/bot-api.ts";
export type { CommandContext } from "./bot/commands/command-spec.ts";
export { type BotDefinition, defineBot, type EventType } from "./bot/define-bot.ts";
export { ModuleError } from "./bot/module-error.ts";
export { channelSetting, groupSetting, snippetSetting, userSetting } from "./bot/named-settings.ts";
export { ConfigError } from "./config/config-error.ts";
export type { ReloadReport } from "./daemon/reload-plan.ts";
// ── Running the daemon from code ─────────────────────────────────────────────────────────────
export { type RunningDaemon, type StartDaemonOptions, startDaemon } from "./daemon/start-daemon.ts";
export { ContentTooLongError } from "./effects/limits/limit-errors.ts";
export type { ProgressHandle, ProgressOptions } from "./effects/progress/types.ts";
export type { ReactOptions } from "./effects/react.ts";
export type { ReportResult } from "./effects/report/message-reporter.ts";
export type { ScheduleApi, ScheduleMessageParams } from "./effects/schedule/schedule-api.ts";
export { ScheduledMessageError } from "./effects/schedule/scheduled-message-error.ts";
export type { Snippets } from "./effects/snippets/snippet-cache.ts";
export type { TypingHelper } from "./effects/typing/typing-helper.ts";
export { Role, type RoleName } from "./effects/users/roles.ts";
export type { Users } from "./effects/users/user-cache.ts";
export { BothostError } from "./errors/bothost-error.ts";
export { NoRetry } from "./errors/no-retry.ts";
// ── What handlers receive ────────────────────────────────────────────────────────────────────
export type { BotStatus, DaemonStatus } from "./http/daemon-status.ts";
export type { Sender, Where } from "./pipeline/addressed.ts";
export type { ErrorHandler, Middleware, NextFunction } from "./pipeline/composer.ts";
export type { BaseContext, BotContext, JobContext, WebhookContext } from "./pipeline/context.ts";
export type { PromptAnswer, PromptOptions } from "./pipeline/dialogs/prompt.ts";
export { PromptError } from "./pipeline/dialogs/prompt-error.ts";
export type { Filter, FilterPredicate } from "./pipeline/filters.ts";
export { nextOccurrences, validateSchedule } from "./scheduler/timing/occurrences.ts";
export type { KV } from "./state/kv.ts";
export { StateError } from "./state/state-error.ts";
export type { JsonValue } from "./state/state-store.ts";
export { parseTemplate, renderTemplate } from "./template/template.ts";
export type { EventMap, GapEvent, ServerEvent, UnknownEvent } from "./wire/events.ts";
export type { Channel, Message, User } from "./wire/records.ts";
