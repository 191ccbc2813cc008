/**
 * The POST /register state, gated by the fetch set exactly as the server gates it (see
 * docs/internals/server-behaviour.md#registering-a-queue): almost nothing unless `realm`,
 * `realm_user` and friends are asked for.
 */

import { featureLevels } from "../../wire/feature-levels.ts";
import { serverDefaults } from "../../wire/responses.ts";
import type { SandboxCore } from "../core.ts";
import { SERVER_GENERATION } from "../core.ts";
import type { RegisterParams } from "../queues/register-params.ts";
import { pendingScheduled, scheduledToApi } from "../scheduler.ts";
import {
  DEFAULT_CHANNEL_MOVERS,
  DEFAULT_MOVE_LIMIT_SECONDS,
  DEFAULT_TOPIC_MOVERS,
  DEFAULT_TOPIC_RESOLVERS,
  PROFILE_FIELD_TYPES,
  type RealmRecord,
  type UserRecord,
} from "./data.ts";
import { EMOJI_DATA_PATH } from "./emoji.ts";
import { canAccessMetadata, streamById, streamToApi, subscriptionToApi, systemGroupId } from "./streams.ts";
import { userSettingsToApi } from "./user-settings.ts";
import { apiEmail, avatarUrl, botToApi, userGroupView, userToApi } from "./users.ts";

export function initialState(
  core: SandboxCore,
  user: UserRecord,
  reg: RegisterParams,
): Record<string, unknown> {
  const data = core.data;
  const types = reg.fetchEventTypes;
  const want = (type: string) => types === null || types.includes(type);
  const { clientGravatar, capabilities } = reg.queue;
  const includeSubscribers = reg.includeSubscribers !== "false";
  const state: Record<string, unknown> = {};
  if (want("message")) state.max_message_id = data.messages.at(-1)?.id ?? -1;
  if (want("realm")) {
    Object.assign(state, serverDefaults, {
      max_reminder_note_length: 1000,
      max_bulk_new_subscription_messages: 100,
      server_presence_ping_interval_seconds: 60,
      server_presence_offline_threshold_seconds: 200,
      realm_empty_topic_display_name: data.realm.empty_topic_display_name,
      realm_moderation_request_channel_id: data.realm.moderation_request_channel_id ?? -1,
      realm_url: core.url,
      realm_uri: core.url,
      realm_name: data.realm.name,
      realm_description: "",
      realm_default_language: data.realm.default_language,
      realm_allow_edit_history: data.realm.allow_edit_history,
      realm_topics_policy: "allow_empty_topic",
      realm_mandatory_topics: false,
      realm_bot_domain: data.realm.host,
      realm_date_created: data.realm.date_created,
      ...(data.realm.feature_level >= featureLevels.realmUuid ? { realm_uuid: data.realm.uuid } : {}),
      realm_is_zephyr_mirror_realm: false,
      realm_message_content_edit_limit_seconds: data.realm.message_content_edit_limit_seconds ?? null,
      realm_message_content_delete_limit_seconds: null,
      ...moveSettings(data.realm, (name) => systemGroupId(data, name)),
      max_file_upload_size_mib: 25,
      server_generation: SERVER_GENERATION,
      server_needs_upgrade: false,
      server_web_public_streams_enabled: false,
      server_emoji_data_url: `${core.url}${EMOJI_DATA_PATH}`,
      event_queue_longpoll_timeout_seconds:
        core.options.longpollTimeoutSeconds ?? serverDefaults.event_queue_longpoll_timeout_seconds,
    });
    state.server_report_message_types = serverDefaults.server_report_message_types.map((t) => ({ ...t }));
  }
  if (want("realm_user")) {
    const people = data.users.filter((u) => !u.system_bot);
    const view = (u: UserRecord) => {
      const v = userToApi(data, user, u, {
        clientGravatar,
        includeCustomProfileFields: true,
      });
      delete v.is_active;
      return v;
    };
    Object.assign(state, {
      user_id: user.user_id,
      email: apiEmail(data, user),
      delivery_email: user.delivery_email,
      full_name: user.full_name,
      is_admin: user.role <= 200,
      is_owner: user.role === 100,
      is_moderator: user.role === 300,
      is_guest: user.role === 600,
      avatar_source: "G",
      // The own avatar is always a URL: the server does not apply client_gravatar here.
      avatar_url: avatarUrl(data, user, user, false),
      avatar_url_medium: avatarUrl(data, user, user, false),
      can_create_streams: user.role <= 400,
      can_create_public_streams: user.role <= 400,
      can_create_private_streams: user.role <= 400,
      can_create_web_public_streams: user.role <= 200,
      can_subscribe_other_users: user.role <= 400,
      can_invite_others_to_realm: user.role <= 200,
      realm_users: people.filter((u) => u.is_active).map(view),
      realm_non_active_users: people.filter((u) => !u.is_active).map(view),
      cross_realm_bots: data.users
        .filter((u) => u.system_bot)
        .map((u) => ({
          ...userToApi(data, user, u, {
            clientGravatar,
            includeCustomProfileFields: false,
          }),
          is_system_bot: true,
        })),
    });
  }
  if (want("subscription")) {
    const subscribed = data.subscriptions.filter((s) => s.user_id === user.user_id);
    const views = (active: boolean) =>
      subscribed
        .filter((s) => s.active === active)
        .map((s) => subscriptionToApi(data, streamById(data, s.stream_id)!, s, includeSubscribers));
    state.subscriptions = views(true);
    state.unsubscribed = views(false);
    const ever = new Set(subscribed.map((s) => s.stream_id));
    state.never_subscribed = data.streams
      .filter((s) => !ever.has(s.stream_id) && canAccessMetadata(data, user, s))
      .map((s) => streamToApi(data, s));
  }
  if (want("stream"))
    state.streams = data.streams
      .filter((s) => canAccessMetadata(data, user, s))
      .map((s) => streamToApi(data, s));
  if (want("scheduled_messages")) {
    state.scheduled_messages = pendingScheduled(data, user.user_id).map((s) =>
      scheduledToApi(data, s, capabilities.empty_topic_name),
    );
  }
  if (want("saved_snippets")) {
    state.saved_snippets = data.snippets
      .filter((s) => s.user_id === user.user_id)
      .map(({ id, title, content, date_created }) => ({ id, title, content, date_created }));
  }
  if (want("message") && want("update_message_flags")) {
    state.unread_msgs = unreadMessages(core, user);
  }
  if (want("user_settings")) state.user_settings = userSettingsToApi(data, user);
  if (want("realm_user_groups")) {
    state.realm_user_groups = data.userGroups.map((g) => userGroupView(data, g));
  }
  if (want("custom_profile_fields")) {
    // As the server: `required` and `editable_by_user` always, `display_in_profile_summary` only when true.
    state.custom_profile_fields = data.profileFields.map((f) => ({
      id: f.id,
      name: f.name,
      hint: f.hint,
      field_data: f.field_data,
      order: f.order,
      type: PROFILE_FIELD_TYPES.indexOf(f.type) + 1,
      required: f.required,
      editable_by_user: f.editable_by_user,
      ...(f.display_in_profile_summary ? { display_in_profile_summary: true } : {}),
    }));
  }
  if (want("realm_bot")) {
    state.realm_bots = data.users
      .filter((u) => u.is_bot && !u.system_bot && (user.role <= 200 || u.bot_owner_id === user.user_id))
      .map((u) => botToApi(data, user, u));
  }
  if (want("default_streams"))
    state.realm_default_streams = data.streams.filter((s) => s.is_default).map((s) => s.stream_id);
  if (want("realm_playgrounds")) state.realm_playgrounds = data.playgrounds.map((p) => ({ ...p }));
  if (want("realm_domains"))
    state.realm_domains = data.domains.map(({ domain, allow_subdomains }) => ({ domain, allow_subdomains }));
  if (want("realm_user_settings_defaults"))
    state.realm_user_settings_defaults = { ...data.realm.user_settings_defaults };
  if (want("alert_words")) state.alert_words = [];
  if (want("muted_users")) state.muted_users = [];
  if (want("user_topic")) state.user_topics = [];
  if (want("drafts")) state.drafts = [];
  if (want("reminders")) state.reminders = [];
  if (want("realm_emoji")) state.realm_emoji = {};
  if (want("user_status")) state.user_status = {};
  if (want("presence")) {
    state.presences = {};
    state.presence_last_update_id = -1;
    state.server_timestamp = core.clock.now() / 1000;
  }
  if (want("channel_folders")) {
    state.channel_folders = data.channelFolders.map((f) => ({ ...f }));
  }
  return state;
}

function unreadMessages(core: SandboxCore, user: UserRecord): Record<string, unknown> {
  const key = String(user.user_id);
  const unread = core.data.messages.filter((m) => m.flags[key] && !m.flags[key]!.includes("read"));
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const dms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  for (const m of unread) {
    if (m.flags[key]!.includes("mentioned")) mentions.push(m.id);
    if (m.type === "stream") {
      const k = `${m.stream_id}\u0000${m.topic}`;
      const entry = streams.get(k) ?? { stream_id: m.stream_id!, topic: m.topic, unread_message_ids: [] };
      entry.unread_message_ids.push(m.id);
      streams.set(k, entry);
    } else if (m.dm_user_ids.length <= 2) {
      const other = m.dm_user_ids.find((id) => id !== user.user_id) ?? user.user_id;
      dms.set(other, [...(dms.get(other) ?? []), m.id]);
    } else {
      const k = m.dm_user_ids.join(",");
      huddles.set(k, [...(huddles.get(k) ?? []), m.id]);
    }
  }
  return {
    count: unread.length,
    pms: [...dms].map(([other, ids]) => ({
      other_user_id: other,
      sender_id: other,
      unread_message_ids: ids,
    })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([k, ids]) => ({ user_ids_string: k, unread_message_ids: ids })),
    mentions,
    old_unreads_missing: false,
  };
}

/** The realm's message-move settings as `/register` states them: each group as its system group's id. */
function moveSettings(realm: RealmRecord, groupId: (name: string) => number): Record<string, unknown> {
  const limit = (seconds: number | null | undefined) =>
    seconds === undefined ? DEFAULT_MOVE_LIMIT_SECONDS : seconds;
  return {
    realm_can_move_messages_between_channels_group: groupId(
      realm.can_move_messages_between_channels_group ?? DEFAULT_CHANNEL_MOVERS,
    ),
    realm_can_move_messages_between_topics_group: groupId(
      realm.can_move_messages_between_topics_group ?? DEFAULT_TOPIC_MOVERS,
    ),
    realm_can_resolve_topics_group: groupId(realm.can_resolve_topics_group ?? DEFAULT_TOPIC_RESOLVERS),
    realm_move_messages_between_streams_limit_seconds: limit(
      realm.move_messages_between_streams_limit_seconds,
    ),
    realm_move_messages_within_stream_limit_seconds: limit(realm.move_messages_within_stream_limit_seconds),
  };
}
