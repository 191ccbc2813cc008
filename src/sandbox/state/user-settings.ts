/**
 * User settings the sandbox knows: their built-in defaults and, for PATCH
 * /realm/user_settings_defaults, which values each accepts (from the seed).
 */
import type { SandboxData, UserRecord } from "./data.ts";

export const BOOLEAN_SETTINGS = [
  "starred_message_counts",
  "receives_typing_notifications",
  "web_suggest_update_timezone",
  "fluid_layout_width",
  "high_contrast_mode",
  "enable_drafts_synchronization",
  "translate_emoticons",
  "display_emoji_reaction_users",
  "web_escape_navigates_to_home_view",
  "left_side_userlist",
  "hide_ai_features",
  "web_inbox_show_channel_folders",
  "web_left_sidebar_show_channel_folders",
  "web_left_sidebar_unreads_count_summary",
  "enable_stream_desktop_notifications",
  "enable_stream_email_notifications",
  "enable_stream_push_notifications",
  "enable_stream_audible_notifications",
  "enable_desktop_notifications",
  "enable_sounds",
  "enable_followed_topic_desktop_notifications",
  "enable_followed_topic_email_notifications",
  "enable_followed_topic_push_notifications",
  "enable_followed_topic_audible_notifications",
  "enable_offline_email_notifications",
  "enable_offline_push_notifications",
  "enable_online_push_notifications",
  "enable_digest_emails",
  "message_content_in_email_notifications",
  "pm_content_in_desktop_notifications",
  "wildcard_mentions_notify",
  "enable_followed_topic_wildcard_mentions_notify",
  "automatically_follow_topics_where_mentioned",
  "presence_enabled",
  "enter_sends",
  "twenty_four_hour_time",
  "send_private_typing_notifications",
  "send_stream_typing_notifications",
  "send_read_receipts",
  "web_navigate_to_sent_message",
] as const;

const r = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

export const INT_CHOICES: Record<string, number[]> = {
  web_mark_read_on_scroll_policy: r(3),
  web_channel_default_view: r(4),
  color_scheme: r(3),
  demote_inactive_streams: r(3),
  user_list_style: r(3),
  web_stream_unreads_count_display_policy: r(3),
  desktop_icon_count_display: r(4),
  realm_name_in_email_notifications_policy: r(3),
  automatically_follow_topics_policy: r(4),
  automatically_unmute_topics_in_muted_streams_policy: r(4),
  email_address_visibility: r(5),
};

export const FREE_INT_SETTINGS = [
  "web_font_size_px",
  "web_line_height_percent",
  "email_notifications_batching_period_seconds",
];

export const STRING_CHOICES: Record<string, string[] | null> = {
  web_home_view: ["recent", "inbox", "all_messages"],
  emojiset: ["google", "twitter", "text"],
  web_animate_image_previews: ["always", "on_hover", "never"],
  resolved_topic_notice_auto_read_policy: ["always", "except_followed", "never"],
  notification_sound: null,
};

const OFF_BY_DEFAULT = new Set([
  "fluid_layout_width",
  "high_contrast_mode",
  "left_side_userlist",
  "hide_ai_features",
  "web_left_sidebar_unreads_count_summary",
  "enable_stream_desktop_notifications",
  "enable_stream_email_notifications",
  "enable_stream_push_notifications",
  "enable_stream_audible_notifications",
  "enable_followed_topic_email_notifications",
  "enable_online_push_notifications",
  "enter_sends",
  "twenty_four_hour_time",
  "web_navigate_to_sent_message",
]);

export const BUILTIN_DEFAULTS: Record<string, boolean | number | string> = {
  ...Object.fromEntries(BOOLEAN_SETTINGS.map((k) => [k, !OFF_BY_DEFAULT.has(k)])),
  web_mark_read_on_scroll_policy: 1,
  web_channel_default_view: 1,
  color_scheme: 1,
  demote_inactive_streams: 1,
  user_list_style: 2,
  web_stream_unreads_count_display_policy: 2,
  desktop_icon_count_display: 1,
  realm_name_in_email_notifications_policy: 1,
  automatically_follow_topics_policy: 3,
  automatically_unmute_topics_in_muted_streams_policy: 2,
  email_address_visibility: 1,
  web_font_size_px: 16,
  web_line_height_percent: 140,
  email_notifications_batching_period_seconds: 120,
  web_home_view: "inbox",
  emojiset: "google",
  web_animate_image_previews: "on_hover",
  resolved_topic_notice_auto_read_policy: "except_followed",
  notification_sound: "zulip",
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
