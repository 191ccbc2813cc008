/**
 * User settings the sandbox knows: their built-in defaults and, for PATCH
 * /realm/user_settings_defaults, which values each accepts (from the seed).
 */
import type { SandboxData, UserRecord } from "./data.ts";

export const BOOLEAN_SETTINGS: Record<string, boolean> = {
  starred_message_counts: true,
  receives_typing_notifications: true,
  web_suggest_update_timezone: true,
  fluid_layout_width: false,
  high_contrast_mode: false,
  enable_drafts_synchronization: true,
  translate_emoticons: false,
  display_emoji_reaction_users: true,
  web_escape_navigates_to_home_view: true,
  left_side_userlist: false,
  hide_ai_features: false,
  web_inbox_show_channel_folders: true,
  web_left_sidebar_show_channel_folders: true,
  web_left_sidebar_unreads_count_summary: false,
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enable_stream_audible_notifications: false,
  enable_desktop_notifications: true,
  enable_sounds: true,
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: false,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_audible_notifications: true,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: false,
  enable_digest_emails: true,
  message_content_in_email_notifications: true,
  pm_content_in_desktop_notifications: true,
  wildcard_mentions_notify: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  automatically_follow_topics_where_mentioned: true,
  presence_enabled: true,
  enter_sends: false,
  twenty_four_hour_time: false,
  send_private_typing_notifications: true,
  send_stream_typing_notifications: true,
  send_read_receipts: true,
  web_navigate_to_sent_message: false,
};

/**
 * The other settings PATCH /realm/user_settings_defaults takes: `[default, allowed]`, where
 * allowed is n for the integers 1..n, a list of strings, or null for any value of the type.
 */
export const VALUED_SETTINGS: Record<string, [number | string, number | string[] | null]> = {
  web_mark_read_on_scroll_policy: [1, 3],
  web_channel_default_view: [1, 4],
  color_scheme: [1, 3],
  demote_inactive_streams: [1, 3],
  user_list_style: [2, 3],
  web_stream_unreads_count_display_policy: [2, 3],
  desktop_icon_count_display: [1, 4],
  realm_name_in_email_notifications_policy: [1, 3],
  automatically_follow_topics_policy: [3, 4],
  automatically_unmute_topics_in_muted_streams_policy: [2, 4],
  email_address_visibility: [1, 5],
  web_font_size_px: [16, null],
  web_line_height_percent: [140, null],
  email_notifications_batching_period_seconds: [120, null],
  web_home_view: ["inbox", ["recent", "inbox", "all_messages"]],
  emojiset: ["google", ["google", "twitter", "text"]],
  web_animate_image_previews: ["on_hover", ["always", "on_hover", "never"]],
  resolved_topic_notice_auto_read_policy: ["except_followed", ["always", "except_followed", "never"]],
  notification_sound: ["zulip", null],
};

const BUILTIN_DEFAULTS: Record<string, boolean | number | string> = {
  ...BOOLEAN_SETTINGS,
  ...Object.fromEntries(Object.entries(VALUED_SETTINGS).map(([k, [value]]) => [k, value])),
  default_language: "en",
  timezone: "",
};

/** A user's effective setting: their own value, else the built-in default. */
export function setting(user: UserRecord, name: string): boolean | number | string | undefined {
  return user.settings[name] ?? BUILTIN_DEFAULTS[name];
}

/** The `user_settings` object of POST /register. */
export function userSettingsToApi(data: SandboxData, user: UserRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...BUILTIN_DEFAULTS, ...user.settings };
  out.timezone = user.timezone;
  out.email_address_visibility =
    user.settings.email_address_visibility ?? data.realm.email_address_visibility;
  return out;
}
