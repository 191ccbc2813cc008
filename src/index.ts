/**
 * bothost: the public surface. Everything a bot author or an embedding program may import.
 *
 * @example
 * ```ts
 * import { createClient } from "bothost";
 * const client = createClient({ url: "https://chat.example.org", email, apiKey });
 * const me = await client.users.me();
 * ```
 */

export type { EventMap, GenericEvent, KnownEventType, ServerEvent } from "./wire/events.ts";
// ── Wire types (snake_case, 1:1 with the server's documentation) ─────────────────────────────
export type {
  Channel,
  EditSnapshot,
  Message,
  OwnUser,
  Playground,
  SavedSnippet,
  ScheduledMessage,
  Topic,
  User,
} from "./wire/records.ts";
export type { RegisterResponse } from "./wire/responses.ts";

// ── Client ───────────────────────────────────────────────────────────────────────────────────

export { closeConnectionPools } from "./api/connection-pools.ts";
export {
  type Client,
  type ClientCommonOptions,
  type ClientOptions,
  createClient,
} from "./api/create-client.ts";
export type { Params, ParamValue } from "./api/encode.ts";
export {
  ApiError,
  type ApiErrorCode,
  AuthError,
  BadResponseError,
  ClientConfigError,
  isApiError,
  isAuthError,
  isBadResponseError,
  isClientConfigError,
  isNetworkError,
  isRateLimitError,
  isResponseSchemaError,
  isUnsupportedFeatureError,
  NetworkError,
  RateLimitError,
  ResponseSchemaError,
  UnsupportedFeatureError,
} from "./api/errors.ts";
export type { LogFn, Logger } from "./api/logger.ts";
export type { ChannelFoldersApi } from "./api/resources/channel-folders.ts";
export type { ChannelsApi, ListChannelsParams, SubscribeParams } from "./api/resources/channels.ts";
export type { CallOptions } from "./api/resources/context.ts";
export type {
  ClientCapabilities,
  EventsApi,
  GetEventsParams,
  GetEventsResult,
  RegisterParams,
} from "./api/resources/events.ts";
export type {
  GetMessagesParams,
  MessagesApi,
  NarrowTerm,
  ReportType,
  SendMessageParams,
  UpdateMessageParams,
} from "./api/resources/messages.ts";
export type { PushTokensApi } from "./api/resources/push-tokens.ts";
export type { ReactionParams, ReactionsApi } from "./api/resources/reactions.ts";
export type { PlaygroundParams, RealmApi, UserSettingsDefaults } from "./api/resources/realm.ts";
export type { SavedSnippetsApi } from "./api/resources/saved-snippets.ts";
export type {
  CreateScheduledMessageParams,
  ScheduledMessagesApi,
  UpdateScheduledMessageParams,
} from "./api/resources/scheduled-messages.ts";
export type { ServerApi } from "./api/resources/server.ts";
export type { TypingApi, TypingParams } from "./api/resources/typing.ts";
export type { UpdateMembersParams, UserGroupsApi } from "./api/resources/user-groups.ts";
export type { GetUserParams, UsersApi } from "./api/resources/users.ts";
export type { RetryOptions } from "./api/retry.ts";
export type { HttpMethod, RequestFn, RequestOptions } from "./api/transport.ts";
export { readZuliprc, type Zuliprc } from "./api/zuliprc.ts";

// ── Writing bots ─────────────────────────────────────────────────────────────────────────────

export type { ServerInfo } from "./api/server-info.ts";
export type {
  BotApi,
  CronOptions,
  RecurringAnnouncement,
  WebhookOptions,
  WebhookVerify,
} from "./bot/bot-api.ts";
export { type BotDefinition, defineBot, type EventType, type SettingsOf } from "./bot/define-bot.ts";
export type { GapEvent } from "./events/catch-up.ts";
export type { ContextFor, ErrorHandler, EventName, Middleware, NextFunction } from "./pipeline/composer.ts";
export type { BaseContext, BotContext, JobContext, WebhookContext } from "./pipeline/context.ts";
export type { Filter, FilterPredicate } from "./pipeline/filters.ts";
export type { KV } from "./state/kv.ts";

// ── Scheduling: one-shot messages, recurring announcements, cron jobs ────────────────────────

export type { Recipient } from "./effects/schedule/resolve-recipient.ts";
export {
  createScheduleApi,
  type ScheduleApi,
  type ScheduleApiOptions,
  type ScheduledMessageInfo,
  type ScheduleMessageParams,
} from "./effects/schedule/schedule-api.ts";
export {
  isScheduledMessageError,
  ScheduledMessageError,
  type ScheduledMessageErrorCode,
} from "./effects/schedule/scheduled-message-error.ts";
export type { SchedulerStats } from "./scheduler/scheduler-stats.ts";
export type { ScheduleSpec } from "./scheduler/timing/occurrences.ts";
export { nextOccurrences, validateSchedule } from "./scheduler/timing/occurrences.ts";
export { ScheduleError } from "./scheduler/timing/schedule-error.ts";

// ── Helpers on every context: snippets, users, typing, reports, message limits ──────────────

export type { ContextHelpers, TrackedHelper } from "./effects/bot-services.ts";
export { ContentTooLongError, TopicTooLongError } from "./effects/limits/limit-errors.ts";
export { type LongMessagePolicy, splitContent } from "./effects/limits/split-content.ts";
export type { ReportFn, ReportResult } from "./effects/report/message-reporter.ts";
export { ReportError, validateReport } from "./effects/report/report-description.ts";
export type { EnsureResult, Snippets } from "./effects/snippets/snippet-cache.ts";
export { SnippetError } from "./effects/snippets/snippet-error.ts";
export type { TypingHelper, TypingTarget } from "./effects/typing/typing-helper.ts";
export type { Users } from "./effects/users/user-cache.ts";

// ── Webhooks, health and metrics (the HTTP listener) ─────────────────────────────────────────

export { type ApiMetricsSink, BothostMetrics, type RuntimeMetricsSink } from "./http/bothost-metrics.ts";
export { HttpConfigError } from "./http/http-config-error.ts";
export { renderTemplate } from "./webhook/render-template.ts";
export { REPLY_IN_RESPONSE_ID } from "./webhook/reply-exchange.ts";
export { type Verdict, verifyRequest } from "./webhook/verify-request.ts";

// ── Errors raised while loading and running bots ─────────────────────────────────────────────

export { BotSetupError } from "./bot/bot-handle.ts";
export { isModuleError, ModuleError } from "./bot/module-error.ts";
export { ConfigError, isConfigError } from "./config/config-error.ts";
export { BothostError, isBothostError } from "./errors/bothost-error.ts";
export { isRouterError, RouterError } from "./pipeline/router-error.ts";
export { isStateError, StateError } from "./state/state-error.ts";

// ── Embedding the daemon ─────────────────────────────────────────────────────────────────────

export { loadConfig } from "./config/load-config.ts";
export type { BotConfig, Config } from "./config/schema.ts";

// ── Several instances: state in Redis, bots shared by leases ─────────────────────────────────

export type { Coordinator, CoordinatorHooks } from "./cluster/coordinator.ts";
export { SoloCoordinator } from "./cluster/coordinator.ts";
export { LeaseCoordinator, type LeaseCoordinatorOptions } from "./cluster/lease-coordinator.ts";
export { RedisStore, type RedisStoreOptions } from "./state/redis-store.ts";
export type { JsonValue, StateBackend, StateStore } from "./state/state-store.ts";
