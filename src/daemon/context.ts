/**
 * The context every handler receives: the event, who the bot is, its client, state, logger,
 * settings and server limits, and ways to answer.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { SendMessageParams } from "../api/resources/messages.ts";
import { type BotServices, type ContextHelpers, unavailableHelpers } from "../helpers/bot-services.ts";
import type { Clock } from "../helpers/clock.ts";
import type { RoutableContext } from "../router/routable-context.ts";
import { createScheduleApi, type ScheduleApi } from "../scheduler/schedule-api.ts";
import type { KV } from "../state/kv.ts";
import type { ServerEvent } from "../wire/events.ts";
import { replyTarget } from "./reply-target.ts";
import type { ServerInfo } from "./server-info.ts";

/**
 * @example
 * ```ts
 * bot.on("message", { mentioned: true }, async (ctx) => {
 *   const n = ((await ctx.state.get<number>("count")) ?? 0) + 1;
 *   await ctx.state.set("count", n);
 *   await ctx.reply(`I was mentioned ${n} times (feature level ${ctx.server.featureLevel}).`);
 * });
 * ```
 */
/** What every context has, whether it handles an event, a cron job or an inbound webhook. */
export interface BaseContext<S = unknown> {
  /** The bot: its name in the config, its user id and email. */
  bot: { name: string; userId: number; email: string };
  /** The typed client, authenticated as this bot. */
  api: Client;
  /** The bot's own key-value store (persistent, namespaced per bot). */
  state: KV;
  /** A pino child logger bound to the bot (and the event, job or request). */
  log: Logger;
  /** The bot's settings, validated by its schema. */
  settings: S;
  /** The server's feature level, limits and typing timings. */
  server: ServerInfo;
  /** Messages the server sends later for the bot: `schedule.at({ to, topic, content, at })`, list, cancel, reschedule. */
  schedule: ScheduleApi;
  /** Aborted when the handler times out, or when a shutdown's deadline (`shutdown_timeout`) passes. */
  signal: AbortSignal;
  /**
   * Send any message as this bot. Content over the server's `max_message_length` is split at
   * paragraph breaks and sent as several messages (id of the first is returned), or refused
   * (`CONTENT_TOO_LONG`) under `long_messages: reject`; a topic over `max_topic_length` is
   * refused (`TOPIC_TOO_LONG`), never truncated.
   */
  send(params: SendMessageParams): Promise<{ id: number }>;
  /** The bot's saved snippets, cached (`bot.track("snippets")` keeps them fresh from events). */
  snippets: ContextHelpers["snippets"];
  /** Users by id or email, cached (`bot.track("users")` keeps them fresh from events). */
  users: ContextHelpers["users"];
  /** Show typing while work runs; see who is typing (needs `bot.track("typing")`). */
  typing: ContextHelpers["typing"];
  /** Report a message to the moderators, at most once ever per message. */
  report: ContextHelpers["report"];
}

export interface BotContext<S = unknown> extends BaseContext<S>, RoutableContext {
  event: ServerEvent;
  bot: { name: string; userId: number; email: string };
  log: Logger;
  signal: AbortSignal;
  /** True for messages fetched after a new queue (missed while no queue listened). */
  replayed: boolean;
  /** Answer in the event's conversation (same channel and topic, or the same direct message group). */
  reply(content: string): Promise<{ id: number }>;
}

/** The context of a `bot.cron()` job. */
export interface JobContext<S = unknown> extends BaseContext<S> {
  /** `catchUp`: the one run after downtime of a `missed: "run-once"` job. */
  job: { id: string; expression: string; scheduledFor: Date; firedAt: Date; catchUp: boolean };
}

/** The context of a `bot.webhook()` request. */
export interface WebhookContext<S = unknown> extends BaseContext<S> {
  request: {
    /** Parsed body: JSON, or an object of form fields. */
    body: unknown;
    rawBody: Buffer;
    headers: Readonly<Record<string, string | string[] | undefined>>;
    query: Readonly<Record<string, string>>;
    /** The idempotency key, when the webhook declares where to find it. */
    idempotencyKey: string | undefined;
  };
}

export interface ContextDeps<S> {
  bot: { name: string; userId: number; email: string };
  api: Client;
  state: KV;
  log: Logger;
  settings: S;
  server: ServerInfo;
  channelName(streamId: number): string | undefined;
  /** What "now" is for `ctx.schedule` (tests pass a fake clock); default the real clock. */
  clock?: Pick<Clock, "now">;
  /** The bot's shared helpers; without them `ctx.snippets` etc. throw HELPERS_UNAVAILABLE. */
  services?: BotServices;
}

/** The parts every kind of context shares, with the log bound to `bindings`. */
export function createBaseContext<S>(
  deps: ContextDeps<S>,
  signal: AbortSignal,
  bindings: Record<string, unknown>,
): BaseContext<S> {
  const send = async (params: SendMessageParams) => {
    const { id } = await deps.api.messages.send({ read_by_sender: true, ...params }, { signal });
    return { id };
  };
  // The child logger is made on first use: most handlers never log, and a pino child per
  // event was a tenth of the runtime's CPU per message (bench: dispatch).
  let log: Logger | undefined;
  return {
    bot: deps.bot,
    api: deps.api,
    state: deps.state,
    get log() {
      log ??= deps.log.child(bindings);
      return log;
    },
    set log(value: Logger) {
      log = value;
    },
    settings: deps.settings,
    server: deps.server,
    signal,
    schedule: createScheduleApi({
      client: deps.api,
      signal,
      limits: () => deps.server,
      ...(deps.clock ? { clock: deps.clock } : {}),
    }),
    ...(deps.services
      ? deps.services.forContext({ signal, server: deps.server, selfId: deps.bot.userId, send })
      : unavailableHelpers(send)),
  };
}

export function createContext<S>(
  deps: ContextDeps<S>,
  event: ServerEvent,
  signal: AbortSignal,
  extra: { replayed: boolean; eventIssue?: string },
): BotContext<S> {
  const messageId = event.type === "message" ? (event as { message: { id: number } }).message.id : undefined;
  const base = createBaseContext(deps, signal, {
    eventId: event.id,
    eventType: event.type,
    ...(messageId ? { messageId } : {}),
  });
  // Extend `base` in place rather than spread it: a spread would call the lazy `log` getter.
  const fields: Omit<BotContext<S>, keyof BaseContext<S>> = {
    event,
    replayed: extra.replayed,
    channelName: deps.channelName,
    ...(extra.eventIssue ? { eventIssue: extra.eventIssue } : {}),
    reply: (content) => base.send({ ...replyTarget(event, deps.bot.userId), content }),
  };
  return Object.assign(base, fields) as BotContext<S>;
}
