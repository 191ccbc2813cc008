/**
 * Realistic events (shaped as the server sends them:
 * docs/internals/server-behaviour.md#event-shapes) and a context builder for router tests. Every
 * fixture goes through `parseEvent`, so a fixture that drifts from the wire schema fails loudly.
 */
import type { Logger } from "../../src/api/logger.ts";
import { type BotConfig, BotSchema, DEFAULT_LONGPOLL_MARGIN_MS } from "../../src/config/schema.ts";
import {
  type BotRuntimeOptions,
  optionsFromConfig,
  SERVER_BACKOFF,
} from "../../src/daemon/bot-runtime-options.ts";
import type { Composer, RoutableContext } from "../../src/pipeline/composer.ts";
import {
  ConversationQueue,
  type ConversationQueueOptions,
  type QueueTask,
} from "../../src/pipeline/conversation-queue.ts";
import { realClock, type TimerHandle } from "../../src/time/clock.ts";
import { type AnyEvent, type EventMap, parseEvent, type ServerEvent } from "../../src/wire/events.ts";
import { ManualClock } from "./manual-clock.ts";

export const BOT = { name: "helper", userId: 50, email: "helper-bot@example.org" };

function known<T extends ServerEvent>(raw: unknown): T {
  const parsed = parseEvent(raw);
  if (!parsed.known) throw new Error(`fixture does not match its schema: ${parsed.issue}`);
  return parsed.event as T;
}

const sender = { sender_id: 8, sender_email: "Iago@Example.org", sender_full_name: "Iago" };
const messageBase = { client: "website", recipient_id: 20, timestamp: 1_700_000_000, avatar_url: null };

export function channelMessage(
  over: { id?: number; content?: string; subject?: string; flags?: string[] } = {},
) {
  return known<EventMap["message"]>({
    type: "message",
    id: 3,
    flags: over.flags ?? ["read"],
    message: {
      id: over.id ?? 42,
      ...sender,
      ...messageBase,
      content: over.content ?? "Can someone look at ticket 7?",
      type: "stream",
      display_recipient: "Support",
      stream_id: 5,
      subject: over.subject ?? "Ticket-7",
    },
  });
}

export function directMessage(over: { id?: number; content?: string; flags?: string[] } = {}) {
  return known<EventMap["message"]>({
    type: "message",
    id: 4,
    flags: over.flags ?? [],
    message: {
      id: over.id ?? 43,
      ...sender,
      ...messageBase,
      content: over.content ?? "hi bot",
      type: "private",
      display_recipient: [
        { id: 50, email: BOT.email, full_name: "Helper", is_mirror_dummy: false },
        { id: 8, email: "iago@example.org", full_name: "Iago", is_mirror_dummy: false },
      ],
      subject: "",
    },
  });
}

export function topicMove() {
  return known<EventMap["update_message"]>({
    type: "update_message",
    id: 5,
    user_id: 9,
    edit_timestamp: 1_700_000_100,
    message_id: 42,
    message_ids: [41, 42],
    flags: ["read", "mentioned"],
    rendering_only: false,
    stream_id: 5,
    stream_name: "Support",
    new_stream_id: 6,
    propagate_mode: "change_all",
    orig_subject: "Ticket-7",
    subject: "Resolved tickets",
  });
}

export function contentEdit(over: { channelId?: number } = { channelId: 5 }) {
  return known<EventMap["update_message"]>({
    type: "update_message",
    id: 6,
    user_id: 8,
    edit_timestamp: 1_700_000_200,
    message_id: 42,
    message_ids: [42],
    flags: ["read"],
    rendering_only: false,
    ...(over.channelId === undefined ? {} : { stream_id: over.channelId, stream_name: "Support" }),
    orig_content: "old",
    content: "Please deploy now",
    rendered_content: "<p>Please deploy now</p>",
  });
}

export function reaction(op: "add" | "remove" = "add") {
  return known<EventMap["reaction"]>({
    type: "reaction",
    id: 7,
    op,
    message_id: 42,
    emoji_name: "tada",
    emoji_code: "1f389",
    reaction_type: "unicode_emoji",
    user_id: 10,
    user: { user_id: 10, email: "hamlet@example.org", full_name: "Hamlet" },
  });
}

export function channelTyping() {
  return known<EventMap["typing"]>({
    type: "typing",
    id: 8,
    op: "start",
    message_type: "stream",
    sender: { user_id: 10, email: "hamlet@example.org" },
    stream_id: 5,
    topic: "ticket-7",
  });
}

export function directTyping() {
  return known<EventMap["typing"]>({
    type: "typing",
    id: 9,
    op: "stop",
    message_type: "direct",
    sender: { user_id: 8, email: "iago@example.org" },
    recipients: [
      { user_id: 50, email: BOT.email },
      { user_id: 8, email: "iago@example.org" },
    ],
  });
}

export function channelDelete() {
  return known<EventMap["delete_message"]>({
    type: "delete_message",
    id: 10,
    message_type: "stream",
    message_ids: [41, 42],
    stream_id: 5,
    topic: "Ticket-7",
  });
}

export function directDelete() {
  return known<EventMap["delete_message"]>({
    type: "delete_message",
    id: 11,
    message_type: "private",
    message_id: 43,
  });
}

export function subscriptionAdd() {
  return known<EventMap["subscription"]>({
    type: "subscription",
    id: 12,
    op: "add",
    subscriptions: [{ stream_id: 5, name: "Support" }],
  });
}

export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  obj: Record<string, unknown>;
  msg?: string;
}

/** A logger that records lines instead of writing them (the log stream is a boundary we own). */
export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine["level"]) =>
    (obj: Record<string, unknown>, msg?: string): void => {
      lines.push(msg === undefined ? { level, obj } : { level, obj, msg });
    };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

export function ctxFor(event: AnyEvent, extra: Partial<RoutableContext> = {}): RoutableContext {
  return { event, bot: BOT, signal: new AbortController().signal, log: recordingLogger(), ...extra };
}

export { deferred } from "./deferred.ts";

/**
 * What a bot is built from in tests (for `new BotRuntime` or `wireBot`, as the daemon builds
 * it): the config schema's defaults for a bot that sets nothing, a module with no handlers, the
 * real clock; `options` go over them.
 */
export function botOptions(
  options: Pick<BotRuntimeOptions, "name" | "client" | "store" | "log"> & Partial<BotRuntimeOptions>,
): BotRuntimeOptions {
  const fromConfig = optionsFromConfig(BotSchema.parse({ module: "./unused.ts" }) as unknown as BotConfig);
  return {
    definition: { setup: () => {} } as never,
    settings: undefined,
    flush: async () => {},
    ...fromConfig,
    longpollMarginMs: DEFAULT_LONGPOLL_MARGIN_MS,
    backoff: SERVER_BACKOFF,
    clock: realClock,
    ...options,
  };
}

/** A ManualClock that also counts the timers armed on it, to show the queue arms few. */
export class CountingClock extends ManualClock {
  armed = 0;
  override setTimeout(fn: () => void, ms: number): TimerHandle {
    this.armed++;
    return super.setTimeout(fn, ms);
  }
}

/**
 * A conversation queue for tests: 8 tasks at once, a 60 s timeout and a ManualClock (so no
 * timeout fires unless the test moves time), each replaceable.
 */
export function newQueue(options: Partial<ConversationQueueOptions> = {}): ConversationQueue {
  return new ConversationQueue({
    concurrency: 8,
    handlerTimeoutMs: 60_000,
    clock: new ManualClock(0),
    ...options,
  });
}

/** Push `task` on `queue`; resolves once it finished (or was dropped by abortAll). */
export function add(queue: ConversationQueue, key: string, task: QueueTask): Promise<void> {
  return new Promise((resolve) => queue.push(key, task, undefined, resolve));
}

/** `bot.run(ctx)` as a Promise, even when the chain ran (or failed) synchronously. */
export async function dispatch<C extends RoutableContext>(bot: Composer<C>, ctx: C): Promise<void> {
  await bot.run(ctx);
}
