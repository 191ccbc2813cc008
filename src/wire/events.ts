/**
 * Events of the server's event queue (GET /events) as zod schemas. Every event has an increasing
 * (not consecutive) `id` and a `type`; an unknown type is kept as a {@link GenericEvent}.
 */
import { z } from "zod";
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

/** Event type name → event object type, e.g. `EventMap["message"]`. */
export type EventMap = { [K in KnownEventType]: z.infer<(typeof eventSchemas)[K]> };

/** An event whose type this version does not know (or whose payload did not match its schema). */
export interface GenericEvent {
  id: number;
  type: string;
  [key: string]: unknown;
}

export type KnownEvent = EventMap[KnownEventType];
/** Any event from the server's queue: a typed known event, or a generic one of a type this version does not know. */
export type ServerEvent = KnownEvent | GenericEvent;

export function isKnownEventType(type: string): type is KnownEventType {
  return Object.hasOwn(eventSchemas, type);
}

export type ParsedEvent =
  | { known: true; event: KnownEvent }
  | { known: false; event: GenericEvent; issue?: string };

const EventShape = z.looseObject({ id: z.number().int(), type: z.string() });

const int = (v: unknown): boolean => Number.isSafeInteger(v);
const str = (v: unknown): boolean => typeof v === "string";
const optional = (v: unknown, check: (v: unknown) => boolean): boolean => v === undefined || check(v);
const strings = (v: unknown): boolean => Array.isArray(v) && v.every(str);

/**
 * A message event checked by hand, field by field as `eventSchemas.message` has them (nested
 * arrays only as arrays): most events are messages and zod is slow on the hot path. Anything this
 * refuses goes through zod, which then says why.
 */
function isMessageEvent(raw: Record<string, unknown>): boolean {
  const m = raw.message as Record<string, unknown> | null | undefined;
  if (typeof m !== "object" || m === null || !strings(raw.flags) || !optional(raw.local_message_id, str))
    return false;
  return (
    int(m.id) &&
    int(m.sender_id) &&
    str(m.sender_email) &&
    str(m.sender_full_name) &&
    str(m.client) &&
    str(m.content) &&
    int(m.recipient_id) &&
    int(m.timestamp) &&
    (m.type === "stream" || m.type === "private") &&
    (str(m.display_recipient) || Array.isArray(m.display_recipient)) &&
    str(m.subject) &&
    optional(m.stream_id, int) &&
    optional(m.sender_realm_str, str) &&
    (m.avatar_url === null || optional(m.avatar_url, str)) &&
    optional(m.content_type, str) &&
    optional(m.topic_links, Array.isArray) &&
    optional(m.is_me_message, (v) => typeof v === "boolean") &&
    optional(m.reactions, Array.isArray) &&
    optional(m.submessages, Array.isArray) &&
    optional(m.flags, strings) &&
    optional(m.last_edit_timestamp, int) &&
    optional(m.last_moved_timestamp, int) &&
    optional(m.rendered_content, str)
  );
}

/**
 * Parse one raw event. Known types are validated against their schema; an unknown type, or a
 * known type whose payload does not match, comes back as a generic event with the reason.
 */
export function parseEvent(raw: unknown): ParsedEvent {
  const r = raw as Record<string, unknown> | null;
  if (r?.type === "message" && int(r.id) && isMessageEvent(r))
    return { known: true, event: r as unknown as KnownEvent };
  const shape = EventShape.safeParse(raw);
  if (!shape.success) {
    const fallback = { id: -1, type: "invalid", raw } satisfies GenericEvent;
    return { known: false, event: fallback, issue: "event has no integer id or string type" };
  }
  const shapeType = shape.data.type;
  if (!isKnownEventType(shapeType)) return { known: false, event: shape.data as GenericEvent };
  const parsed = eventSchemas[shapeType].safeParse(raw);
  if (parsed.success) return { known: true, event: parsed.data as KnownEvent };
  const issue = parsed.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");
  return { known: false, event: shape.data as GenericEvent, issue };
}
