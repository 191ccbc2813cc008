/** Response bodies: the server's error codes, and the parts of POST /register's response a bot uses. */
import { z } from "zod";
import { User } from "./records.ts";

/**
 * Error codes the server sends. 405 and 500 bodies carry no `code` at all. On `/api/v1` with
 * Basic auth, every authentication failure arrives as 401 `UNAUTHORIZED`, whatever the cause.
 */
export type ServerErrorCode =
  | "BAD_REQUEST"
  | "REQUEST_VARIABLE_MISSING"
  | "REQUEST_VARIABLE_INVALID"
  | "REQUEST_CONFUSING_VAR"
  | "INVALID_JSON"
  | "STREAM_DOES_NOT_EXIST"
  | "CHANNEL_ALREADY_EXISTS"
  | "UNAUTHORIZED_PRINCIPAL"
  | "BAD_EVENT_QUEUE_ID"
  | "RATE_LIMIT_HIT"
  | "UNAUTHORIZED"
  | "INVALID_API_KEY"
  | "USER_DEACTIVATED"
  | "REALM_DEACTIVATED"
  | "AUTHENTICATION_FAILED"
  | "NONEXISTENT_SUBDOMAIN"
  | "REACTION_ALREADY_EXISTS"
  | "REACTION_DOES_NOT_EXIST"
  | "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED"
  | "TOPIC_WILDCARD_MENTION_NOT_ALLOWED"
  | "STREAM_WILDCARD_MENTION_NOT_ALLOWED"
  | "EXPECTATION_MISMATCH"
  | "CSRF_FAILED"
  | "SERVER_NOT_READY";

/** GET /server_settings (no authentication needed). */
export const ServerSettings = z.looseObject({
  zulip_version: z.string(),
  zulip_feature_level: z.number().int(),
  zulip_merge_base: z.string().optional(),
  push_notifications_enabled: z.boolean().optional(),
  realm_url: z.string().optional(),
  realm_name: z.string().optional(),
});
export type ServerSettings = z.infer<typeof ServerSettings>;

/**
 * The POST /register response. Most fields appear only when their type is in
 * `fetch_event_types` (`realm` brings the limits and typing timings, `realm_user` the own id).
 */
export const RegisterResponse = ServerSettings.omit({ push_notifications_enabled: true }).extend({
  queue_id: z.string().nullable(),
  last_event_id: z.number().int(),
  max_message_id: z.number().int().optional(),
  // realm
  max_message_length: z.number().int().optional(),
  max_topic_length: z.number().int().optional(),
  max_stream_name_length: z.number().int().optional(),
  max_stream_description_length: z.number().int().optional(),
  max_channel_folder_name_length: z.number().int().optional(),
  max_channel_folder_description_length: z.number().int().optional(),
  event_queue_longpoll_timeout_seconds: z.number().optional(),
  server_typing_started_expiry_period_milliseconds: z.number().int().optional(),
  server_typing_stopped_wait_period_milliseconds: z.number().int().optional(),
  server_typing_started_wait_period_milliseconds: z.number().int().optional(),
  server_report_message_types: z.array(z.looseObject({ key: z.string(), name: z.string() })).optional(),
  realm_empty_topic_display_name: z.string().optional(),
  realm_moderation_request_channel_id: z.number().int().optional(),
  /** Seconds after which the sender can no longer edit a message's content; null: no limit (0 before FL 138). */
  realm_message_content_edit_limit_seconds: z.number().int().nullable().optional(),
  /** Where the server's unicode emoji names by code are (FL 140): see `client.server.emojiData`. */
  server_emoji_data_url: z.string().optional(),
  // realm: what tells one organization from another (see `state/server-identity.ts`)
  realm_uri: z.string().optional(),
  realm_date_created: z.number().int().optional(),
  realm_uuid: z.string().optional(),
  // realm_user
  user_id: z.number().int().optional(),
  email: z.string().optional(),
  delivery_email: z.string().nullable().optional(),
  full_name: z.string().optional(),
  is_admin: z.boolean().optional(),
  is_owner: z.boolean().optional(),
  is_moderator: z.boolean().optional(),
  is_guest: z.boolean().optional(),
  realm_users: z.array(User.partial().extend({ user_id: z.number().int() })).optional(),
  realm_non_active_users: z.array(User.partial().extend({ user_id: z.number().int() })).optional(),
  /** The server's system bots (the Notification Bot, …), in no organization's user list. */
  cross_realm_bots: z.array(User.partial().extend({ user_id: z.number().int() })).optional(),
  // realm_user_groups: each group's id, name, members and direct_subgroup_ids
  realm_user_groups: z.array(z.looseObject({ id: z.number().int(), name: z.string() })).optional(),
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;

/**
 * Defaults the real server reports in /register when `realm` is fetched (see
 * docs/internals/server-behaviour.md#registering-a-queue).
 */
export const serverDefaults = {
  max_message_length: 10000,
  max_topic_length: 60,
  max_stream_name_length: 60,
  max_stream_description_length: 1024,
  max_channel_folder_name_length: 60,
  max_channel_folder_description_length: 1024,
  event_queue_longpoll_timeout_seconds: 90,
  server_typing_started_expiry_period_milliseconds: 45000,
  server_typing_stopped_wait_period_milliseconds: 12000,
  server_typing_started_wait_period_milliseconds: 30000,
  realm_empty_topic_display_name: "general chat",
  server_report_message_types: [
    { key: "spam", name: "Spam" },
    { key: "harassment", name: "Harassment" },
    { key: "inappropriate", name: "Inappropriate content" },
    { key: "norms", name: "Violates community norms" },
    { key: "other", name: "Other reason" },
  ],
} as const;
