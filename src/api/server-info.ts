/**
 * What a bot knows about its server from the register response (see
 * docs/internals/server-behaviour.md#registering-a-queue), with defaults.
 */
import { type RegisterResponse, serverDefaults } from "../wire/responses.ts";

export interface ServerInfo {
  version: string;
  featureLevel: number;
  realmUrl: string | undefined;
  maxMessageLength: number;
  maxTopicLength: number;
  /** Long-poll timeout the server promises to answer within (a heartbeat at the latest). */
  longpollTimeoutSeconds: number;
  typing: { startedExpiryMs: number; stoppedWaitMs: number; startedWaitMs: number };
  /** Report types the server accepts (`server_report_message_types`). */
  reportTypes: readonly { key: string; name: string }[];
  /** Display name of the empty topic (`realm_empty_topic_display_name`). */
  emptyTopicName: string;
  /** The moderation request channel's id, or undefined when reporting is off. */
  moderationChannelId: number | undefined;
  /**
   * Seconds after sending that a message's content can still be edited
   * (`realm_message_content_edit_limit_seconds`); undefined: no limit.
   */
  editLimitSeconds?: number;
  /** Where the server's unicode emoji data is (`server_emoji_data_url`, FL 140), when it said. */
  emojiDataUrl?: string;
}

export function serverInfoFrom(reg: RegisterResponse): ServerInfo {
  const d = serverDefaults;
  // Before FL 204 the server sent no typing timings; the API docs give these fallbacks.
  const old = reg.zulip_feature_level < 204;
  const moderation = reg.realm_moderation_request_channel_id;
  const editLimit = reg.realm_message_content_edit_limit_seconds;
  return {
    version: reg.zulip_version,
    featureLevel: reg.zulip_feature_level,
    realmUrl: reg.realm_url,
    maxMessageLength: reg.max_message_length ?? d.max_message_length,
    maxTopicLength: reg.max_topic_length ?? d.max_topic_length,
    longpollTimeoutSeconds:
      reg.event_queue_longpoll_timeout_seconds ?? d.event_queue_longpoll_timeout_seconds,
    typing: {
      startedExpiryMs:
        reg.server_typing_started_expiry_period_milliseconds ??
        (old ? 15_000 : d.server_typing_started_expiry_period_milliseconds),
      stoppedWaitMs:
        reg.server_typing_stopped_wait_period_milliseconds ??
        (old ? 5_000 : d.server_typing_stopped_wait_period_milliseconds),
      startedWaitMs:
        reg.server_typing_started_wait_period_milliseconds ??
        (old ? 10_000 : d.server_typing_started_wait_period_milliseconds),
    },
    reportTypes: reg.server_report_message_types ?? d.server_report_message_types,
    emptyTopicName: reg.realm_empty_topic_display_name ?? d.realm_empty_topic_display_name,
    moderationChannelId: moderation === undefined || moderation < 0 ? undefined : moderation,
    // null is no limit; so was 0 before feature level 138.
    ...(editLimit ? { editLimitSeconds: editLimit } : {}),
    ...(reg.server_emoji_data_url !== undefined && { emojiDataUrl: reg.server_emoji_data_url }),
  };
}
