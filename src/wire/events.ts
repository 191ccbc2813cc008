/**
 * Events of the server's event queue (GET /events) as zod schemas, and the events bothost makes
 * itself (a catch-up's `gap`). Every server event has an increasing (not consecutive) `id` and a
 * `type`; an event of a type this version does not know, or whose payload fails its type's schema,
 * is kept apart as an {@link UnknownEvent}, so that `type` narrows every typed event soundly.
 */
import { z } from "zod";
import { isMessageEvent } from "./message-check.ts";
import { Message, SavedSnippet, ScheduledMessage, Subscription } from "./records.ts";

const userRef = z.looseObject({ user_id: z.number().int(), email: z.string() });

/** A known event's schema: `id`, `type` and the type's own fields. */
const event = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.looseObject({ id: z.number().int(), type: z.literal(type), ...shape });

/** Seed event types whose payload the interface document leaves unspecified: id, type and op. */
const opaque = <T extends string>(type: T) => event(type, { op: z.string().optional() });

/** The schema of each known event type, by `type`. */
export const eventSchemas = {
  heartbeat: event("heartbeat", {}),
  restart: event("restart", {
    zulip_version: z.string().optional(),
    zulip_merge_base: z.string().optional(),
    zulip_feature_level: z.number().int().optional(),
    server_generation: z.number().optional(),
  }),
  message: event("message", {
    message: Message,
    flags: z.array(z.string()),
    local_message_id: z.string().optional(),
  }),
  update_message: event("update_message", {
    user_id: z.number().int().nullable(),
    edit_timestamp: z.number().int(),
    message_id: z.number().int(),
    message_ids: z.array(z.number().int()),
    flags: z.array(z.string()),
    rendering_only: z.boolean(),
    stream_id: z.number().int().optional(),
    stream_name: z.string().optional(),
    new_stream_id: z.number().int().optional(),
    propagate_mode: z.enum(["change_one", "change_later", "change_all"]).optional(),
    orig_subject: z.string().optional(),
    subject: z.string().optional(),
    orig_content: z.string().optional(),
    orig_rendered_content: z.string().optional(),
    content: z.string().optional(),
    rendered_content: z.string().optional(),
    is_me_message: z.boolean().optional(),
  }),
  delete_message: event("delete_message", {
    message_type: z.enum(["stream", "private"]),
    message_ids: z.array(z.number().int()).optional(),
    message_id: z.number().int().optional(),
    stream_id: z.number().int().optional(),
    topic: z.string().optional(),
  }),
  reaction: event("reaction", {
    op: z.enum(["add", "remove"]),
    message_id: z.number().int(),
    emoji_name: z.string(),
    emoji_code: z.string(),
    reaction_type: z.string(),
    user_id: z.number().int(),
    user: z.looseObject({ user_id: z.number().int(), email: z.string(), full_name: z.string() }).optional(),
  }),
  typing: event("typing", {
    op: z.enum(["start", "stop"]),
    message_type: z.enum(["direct", "stream"]),
    sender: userRef,
    recipients: z.array(userRef).optional(),
    stream_id: z.number().int().optional(),
    topic: z.string().optional(),
  }),
  typing_edit_message: event("typing_edit_message", {
    op: z.enum(["start", "stop"]),
    sender_id: z.number().int(),
    message_id: z.number().int(),
    recipient: z.unknown(),
  }),
  scheduled_messages: z.discriminatedUnion("op", [
    event("scheduled_messages", { op: z.literal("add"), scheduled_messages: z.array(ScheduledMessage) }),
    event("scheduled_messages", { op: z.literal("update"), scheduled_message: ScheduledMessage }),
    event("scheduled_messages", { op: z.literal("remove"), scheduled_message_id: z.number().int() }),
  ]),
  saved_snippets: z.discriminatedUnion("op", [
    event("saved_snippets", { op: z.literal("add"), saved_snippet: SavedSnippet }),
    event("saved_snippets", { op: z.literal("update"), saved_snippet: SavedSnippet }),
    event("saved_snippets", { op: z.literal("remove"), saved_snippet_id: z.number().int() }),
  ]),
  /** `person` differs by op and by which field group changed; only `user_id` is always there. */
  realm_user: event("realm_user", {
    op: z.enum(["add", "remove", "update"]),
    person: z.looseObject({ user_id: z.number().int() }),
  }),
  subscription: event("subscription", {
    op: z.string(),
    subscriptions: z.array(Subscription).optional(),
    stream_id: z.number().int().optional(),
    stream_ids: z.array(z.number().int()).optional(),
    user_ids: z.array(z.number().int()).optional(),
    property: z.string().optional(),
    value: z.unknown().optional(),
  }),
  user_settings: event("user_settings", {
    op: z.literal("update"),
    property: z.string(),
    value: z.union([z.boolean(), z.number(), z.string()]),
    language_name: z.string().optional(),
  }),
  alert_words: event("alert_words", { alert_words: z.array(z.string()) }),
  attachment: opaque("attachment"),
  channel_folder: opaque("channel_folder"),
  device: opaque("device"),
  drafts: opaque("drafts"),
  navigation_view: opaque("navigation_view"),
  realm: opaque("realm"),
  realm_bot: opaque("realm_bot"),
  realm_domains: opaque("realm_domains"),
  realm_emoji: opaque("realm_emoji"),
  realm_user_settings_defaults: opaque("realm_user_settings_defaults"),
  reminders: opaque("reminders"),
  stream: opaque("stream"),
  update_message_flags: opaque("update_message_flags"),
  user_group: opaque("user_group"),
} as const;

export type KnownEventType = keyof typeof eventSchemas;

/** The server's event types: type name → event object type. */
type WireEventMap = { [K in KnownEventType]: z.infer<(typeof eventSchemas)[K]> };

/**
 * Why a gap happened: the queue expired, a poll's acknowledgement was refused, the watchdog, a
 * restart, or the queue was renewed to receive more event types.
 */
export type GapReason = "queue_expired" | "ack_rejected" | "watchdog" | "restart" | "event_types";

/**
 * A gap: after a new queue, events the bot may have missed that cannot be fetched again
 * (reactions, edits, subscription changes…). Made by bothost, not the server: it has no `id`.
 */
export type GapEvent = {
  type: "gap";
  id?: undefined;
  reason: GapReason;
  /** When the server was last heard from before the gap (ms since epoch), if known. */
  since: number | undefined;
  /** Event types other than messages that were not delivered during the gap. */
  eventTypes: string[];
  /** Messages fetched again and handed to the bot. */
  replayedMessages: number;
  /**
   * Messages missed but not replayed because of the replay limits: those read. When more than
   * 1,000 were missed, catch-up stops reading back at the first message past a limit, so some
   * missed ones may not be counted (a lower bound).
   */
  skippedMessages: number;
};

/**
 * A message event. From the queue it has the queue's `id`; bothost also makes message events, with
 * no `id`, from messages it fetches after a lost queue (`ctx.replayed`), receives by outgoing
 * webhook, or replays in a backtest.
 */
export type MessageEvent = {
  id?: number | undefined;
  type: "message";
  message: Message;
  flags: string[];
  local_message_id?: string | undefined;
  [key: string]: unknown;
};

/** Event type name → event object type, the server's and bothost's own (`gap`): `EventMap["message"]`. */
export type EventMap = Omit<WireEventMap, "message"> & { message: MessageEvent; gap: GapEvent };

/** A typed event as the server's queue delivers it (every one with its `id`). */
export type KnownEvent = WireEventMap[KnownEventType];

/**
 * Every typed event a handler gets: the server's known events and bothost's own (`gap`). `type`
 * narrows it (`switch (event.type) { case "message": event.message.subject … }`).
 */
export type ServerEvent = EventMap[keyof EventMap];

/**
 * An event of a type this version does not know, or of a known type whose payload did not match
 * its schema (then `ctx.eventIssue` says why). Not part of {@link ServerEvent}: it reaches
 * `bot.on("unknown")`, routes for its own type name, and middleware (`bot.use`).
 */
export interface UnknownEvent {
  id: number;
  type: string;
  [key: string]: unknown;
}

/** What a source delivers: a typed event, or an unknown one. Tell them apart with {@link isTypedEvent}. */
export type AnyEvent = ServerEvent | UnknownEvent;

export function isKnownEventType(type: string): type is KnownEventType {
  return Object.hasOwn(eventSchemas, type);
}

/** Whether `type` names a typed event: one of the server's known types, or bothost's `gap`. */
export function isEventType(type: string): type is keyof EventMap {
  return type === "gap" || isKnownEventType(type);
}

/**
 * Whether `event` is typed by its `type`: a known type that passed its schema (its `issue` is
 * undefined), or one of bothost's own. Everything else is an {@link UnknownEvent}.
 */
export function isTypedEvent(event: AnyEvent, issue: string | undefined): event is ServerEvent {
  return issue === undefined && isEventType(event.type);
}

export type ParsedEvent =
  | { known: true; event: KnownEvent }
  | { known: false; event: UnknownEvent; issue?: string };

const EventShape = z.looseObject({ id: z.number().int(), type: z.string() });

/** A heartbeat event (`{ id, type: "heartbeat" }`, its whole schema), checked plainly. */
function isHeartbeat(raw: unknown): raw is EventMap["heartbeat"] {
  const e = raw as { type?: unknown; id?: unknown } | null;
  return typeof e === "object" && e !== null && e.type === "heartbeat" && Number.isInteger(e.id);
}

/**
 * Parse one raw event. Known types are validated against their schema; an unknown type, or a
 * known type whose payload does not match, comes back as an unknown event with the reason.
 */
export function parseEvent(raw: unknown): ParsedEvent {
  if (isMessageEvent(raw)) return { known: true, event: raw };
  // The other event every queue gets: each idle poll ends with one.
  if (isHeartbeat(raw)) return { known: true, event: raw };
  const shape = EventShape.safeParse(raw);
  if (!shape.success) {
    const fallback: UnknownEvent = { id: -1, type: "invalid", raw };
    return { known: false, event: fallback, issue: "event has no integer id or string type" };
  }
  const unknown: UnknownEvent = shape.data;
  if (!isKnownEventType(unknown.type)) return { known: false, event: unknown };
  const parsed = eventSchemas[unknown.type].safeParse(raw);
  if (parsed.success) return { known: true, event: parsed.data };
  return { known: false, event: unknown, issue: describeIssues(parsed.error.issues) };
}

/**
 * A message event bothost makes from a message it received outside the queue (an outgoing
 * webhook's payload): the message checked as the queue's would be; no `id`.
 */
export function messageEventOf(
  message: unknown,
  flags: string[],
): { event: MessageEvent; issue?: undefined } | { event?: undefined; issue: string } {
  const parsed = Message.safeParse(message);
  if (parsed.success) return { event: { type: "message", message: parsed.data, flags } };
  return { issue: describeIssues(parsed.error.issues, ["message"]) };
}

const GapShape = z.object({
  type: z.literal("gap"),
  reason: z.enum(["queue_expired", "ack_rejected", "watchdog", "restart"]),
  since: z.number().optional(),
  eventTypes: z.array(z.string()),
  replayedMessages: z.number().int(),
  skippedMessages: z.number().int(),
});

/**
 * An event kept as JSON (a dead letter's) typed again, checked as when it first arrived: a queue
 * event by its schema, a message event without an id as bothost makes them, a gap as bothost makes
 * it. `issue` is set when a known type fails its schema (it is then an unknown event).
 */
export function reviveEvent(raw: unknown): { event: AnyEvent; issue: string | undefined } {
  const gap = GapShape.safeParse(raw);
  if (gap.success) return { event: { ...gap.data, since: gap.data.since }, issue: undefined };
  const fields = z.looseObject({ type: z.literal("message"), flags: z.array(z.string()) }).safeParse(raw);
  if (fields.success && fields.data.id === undefined) {
    const made = messageEventOf(fields.data.message, fields.data.flags);
    if (made.event) return { event: made.event, issue: undefined };
  }
  const parsed = parseEvent(raw);
  return parsed.known
    ? { event: parsed.event, issue: undefined }
    : { event: parsed.event, issue: parsed.issue };
}

/** The first few problems zod found, each at its path: `message.sender_id: Invalid input: …`. */
function describeIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): string {
  return issues
    .slice(0, 3)
    .map((i) => `${[...prefix, ...i.path].map(String).join(".") || "(root)"}: ${i.message}`)
    .join("; ");
}
