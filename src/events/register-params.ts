/**
 * What a bot's queue asks the server for (see
 * docs/internals/server-behaviour.md#registering-a-queue): its event types, narrow and flags, the
 * initial state that carries the limits, and the capabilities that bring modern event shapes.
 */
import type { RegisterParams } from "../api/resources/events.ts";
import type { Narrow } from "../wire/records.ts";

export interface QueueSpec {
  /** Event types to queue; `null` means all types. */
  eventTypes: readonly string[] | null;
  narrow?: Narrow;
  allPublicStreams?: boolean;
}

/**
 * `realm` brings the limits, typing timings and long-poll timeout. `realm_user` brings every user
 * of the organization, so it is fetched only by a queue that keeps the users cache current
 * (`realm_user` events: `bot.track("users")`, or commands); the others ask GET /users/me once for
 * the bot's own id (see docs/internals/server-behaviour.md#registering-a-queue).
 * `realm_user_groups` likewise only with `user_group` events.
 */
const fetchEventTypes = ["realm"] as const;
const fetchedWith: Readonly<Record<string, string>> = {
  realm_user: "realm_user",
  user_group: "realm_user_groups",
};

function fetchTypes(eventTypes: readonly string[] | null): string[] {
  const kept = eventTypes === null ? [] : eventTypes.filter((t) => Object.hasOwn(fetchedWith, t));
  return [...fetchEventTypes, ...kept.map((t) => fetchedWith[t]!)];
}

const clientCapabilities = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  empty_topic_name: true,
  stream_typing_notifications: true,
  user_avatar_url_field_optional: true,
} as const;

/**
 * GET /messages parameters that give replayed messages the shape the queue's message events
 * have under {@link registerParams}: raw Markdown (`apply_markdown: false`), empty topics kept as
 * `""` (the `empty_topic_name` capability), and `avatar_url` possibly null (`client_gravatar`).
 */
export const replayMessageFormat = {
  apply_markdown: false,
  client_gravatar: true,
  allow_empty_topic_name: true,
} as const;

/**
 * A server restart keeps the queue and tells it the server's new version and feature level in a
 * `restart` event, but only to a queue that takes that type (see
 * docs/internals/server-behaviour.md#the-event-queue): every queue asks for it, so that the client
 * learns an upgrade's feature level without a new queue.
 */
function withRestart(eventTypes: readonly string[]): string[] {
  return eventTypes.includes("restart") ? [...eventTypes] : [...eventTypes, "restart"];
}

export function registerParams(spec: QueueSpec): RegisterParams {
  return {
    ...(spec.eventTypes === null ? {} : { event_types: withRestart(spec.eventTypes) }),
    fetch_event_types: fetchTypes(spec.eventTypes),
    ...(spec.narrow && spec.narrow.length > 0 ? { narrow: spec.narrow } : {}),
    ...(spec.allPublicStreams ? { all_public_streams: true } : {}),
    apply_markdown: replayMessageFormat.apply_markdown,
    client_gravatar: replayMessageFormat.client_gravatar,
    client_capabilities: { ...clientCapabilities },
  };
}
