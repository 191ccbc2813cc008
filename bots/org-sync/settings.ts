/**
 * The org-sync bot's settings (zod). `user_settings_defaults` takes exactly the parameters of
 * PATCH /realm/user_settings_defaults, each checked for its type and allowed values, so a typo is
 * reported at its config line rather than by the server.
 */
import { groupSetting } from "bothost";
import { z } from "zod";

// biome-ignore format: one list, as the seed gives it
const FLAGS = [
  "starred_message_counts", "receives_typing_notifications", "web_suggest_update_timezone",
  "fluid_layout_width", "high_contrast_mode", "enable_drafts_synchronization", "translate_emoticons",
  "display_emoji_reaction_users", "web_escape_navigates_to_home_view", "left_side_userlist",
  "hide_ai_features", "web_inbox_show_channel_folders", "web_left_sidebar_show_channel_folders",
  "web_left_sidebar_unreads_count_summary", "enable_stream_desktop_notifications",
  "enable_stream_email_notifications", "enable_stream_push_notifications",
  "enable_stream_audible_notifications", "enable_desktop_notifications", "enable_sounds",
  "enable_followed_topic_desktop_notifications", "enable_followed_topic_email_notifications",
  "enable_followed_topic_push_notifications", "enable_followed_topic_audible_notifications",
  "enable_offline_email_notifications", "enable_offline_push_notifications",
  "enable_online_push_notifications", "enable_digest_emails", "message_content_in_email_notifications",
  "pm_content_in_desktop_notifications", "wildcard_mentions_notify",
  "enable_followed_topic_wildcard_mentions_notify", "automatically_follow_topics_where_mentioned",
  "presence_enabled", "enter_sends", "twenty_four_hour_time", "send_private_typing_notifications",
  "send_stream_typing_notifications", "send_read_receipts", "web_navigate_to_sent_message",
] as const;

const CHOICES: Record<string, readonly number[]> = {
  web_mark_read_on_scroll_policy: [1, 2, 3],
  web_channel_default_view: [1, 2, 3, 4],
  color_scheme: [1, 2, 3],
  demote_inactive_streams: [1, 2, 3],
  user_list_style: [1, 2, 3],
  web_stream_unreads_count_display_policy: [1, 2, 3],
  desktop_icon_count_display: [1, 2, 3, 4],
  realm_name_in_email_notifications_policy: [1, 2, 3],
  automatically_follow_topics_policy: [1, 2, 3, 4],
  automatically_unmute_topics_in_muted_streams_policy: [1, 2, 3, 4],
  email_address_visibility: [1, 2, 3, 4, 5],
};

const STRINGS: Record<string, readonly string[] | undefined> = {
  web_home_view: ["recent", "inbox", "all_messages"],
  emojiset: ["google", "twitter", "text"],
  web_animate_image_previews: ["always", "on_hover", "never"],
  resolved_topic_notice_auto_read_policy: ["always", "except_followed", "never"],
  notification_sound: undefined,
};

const choice = (allowed: readonly number[]) =>
  z.number().refine((v) => allowed.includes(v), { error: `must be one of ${allowed.join(", ")}` });

/** Every parameter of PATCH /realm/user_settings_defaults, all optional. */
export const UserSettingsDefaults = z.strictObject({
  ...Object.fromEntries(FLAGS.map((f) => [f, z.boolean().optional()])),
  ...Object.fromEntries(Object.entries(CHOICES).map(([k, v]) => [k, choice(v).optional()])),
  web_font_size_px: z.number().int().positive().optional(),
  web_line_height_percent: z.number().int().positive().optional(),
  email_notifications_batching_period_seconds: z.number().int().nonnegative().optional(),
  ...Object.fromEntries(
    Object.entries(STRINGS).map(([k, v]) => [
      k,
      (v ? z.enum(v as [string, ...string[]]) : z.string().min(1)).optional(),
    ]),
  ),
}) as z.ZodType<Record<string, boolean | number | string | undefined>>;

const ROLE_NAMES = ["owner", "admin", "moderator", "member", "guest"] as const;
export const ROLE_VALUES: Record<(typeof ROLE_NAMES)[number], number> = {
  owner: 100,
  admin: 200,
  moderator: 300,
  member: 400,
  guest: 600,
};

export const OrgSyncSettings = z.object({
  /** Only log the plan; change nothing. */
  dry_run: z.boolean().default(false),
  user_settings_defaults: UserSettingsDefaults.default({}),
  channel_folders: z
    .array(
      z.object({ name: z.string().trim().min(1).max(60), description: z.string().max(1024).default("") }),
    )
    .default([]),
  playgrounds: z
    .array(
      z.object({
        name: z.string().trim().min(1),
        pygments_language: z.string().trim().min(1),
        url_template: z.string().regex(/^https?:\/\/[^{}]*\{code\}[^{}]*$/, {
          error: "must be an http(s) URL with exactly one {code}",
        }),
      }),
    )
    .default([]),
  email_domains: z
    .array(
      z.object({
        domain: z
          .string()
          .trim()
          .toLowerCase()
          .regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/, { error: "must be a domain like example.org" }),
        allow_subdomains: z.boolean().default(false),
      }),
    )
    .default([]),
  /** Who belongs to which user group: each matching active user is added (never removed). */
  group_membership: z
    .array(
      z.object({
        group: groupSetting(z.string().trim().min(1)),
        /** Roles that belong; default every role. */
        roles: z.array(z.enum(ROLE_NAMES)).min(1).optional(),
        include_bots: z.boolean().default(false),
      }),
    )
    .default([]),
});

export type OrgSyncSettings = z.output<typeof OrgSyncSettings>;
export type MembershipRule = OrgSyncSettings["group_membership"][number];
