/** Organization settings (new-user defaults, code playgrounds, email domains), and the server's own. */
import { z } from "zod";
import { ServerSettings } from "../../wire/responses.ts";
import type { Params } from "../encode.ts";
import { requireFeature, supports } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "../transport.ts";

type Flag =
  | "starred_message_counts"
  | "receives_typing_notifications"
  | "web_suggest_update_timezone"
  | "fluid_layout_width"
  | "high_contrast_mode"
  | "enable_drafts_synchronization"
  | "translate_emoticons"
  | "display_emoji_reaction_users"
  | "web_escape_navigates_to_home_view"
  | "left_side_userlist"
  | "hide_ai_features"
  | "web_inbox_show_channel_folders"
  | "web_left_sidebar_show_channel_folders"
  | "web_left_sidebar_unreads_count_summary"
  | "enable_stream_desktop_notifications"
  | "enable_stream_email_notifications"
  | "enable_stream_push_notifications"
  | "enable_stream_audible_notifications"
  | "enable_desktop_notifications"
  | "enable_sounds"
  | "enable_followed_topic_desktop_notifications"
  | "enable_followed_topic_email_notifications"
  | "enable_followed_topic_push_notifications"
  | "enable_followed_topic_audible_notifications"
  | "enable_offline_email_notifications"
  | "enable_offline_push_notifications"
  | "enable_online_push_notifications"
  | "enable_digest_emails"
  | "message_content_in_email_notifications"
  | "pm_content_in_desktop_notifications"
  | "wildcard_mentions_notify"
  | "enable_followed_topic_wildcard_mentions_notify"
  | "automatically_follow_topics_where_mentioned"
  | "presence_enabled"
  | "enter_sends"
  | "twenty_four_hour_time"
  | "send_private_typing_notifications"
  | "send_stream_typing_notifications"
  | "send_read_receipts"
  | "web_navigate_to_sent_message";

/** 1 participates, 2 sends a message, 3 starts, 4 never. */
type FollowPolicy = 1 | 2 | 3 | 4;

/**
 * Parameters of PATCH /realm/user_settings_defaults (enumerated values as literals): defaults for
 * users who join later; existing users never change. Every field is optional.
 */
export type UserSettingsDefaults = { [K in Flag]?: boolean } & {
  /** 1 always, 2 only in conversation views, 3 never. */
  web_mark_read_on_scroll_policy?: 1 | 2 | 3;
  /** 1 top topic, 2 channel feed, 3 list of topics, 4 top unread topic. */
  web_channel_default_view?: 1 | 2 | 3 | 4;
  /** 1 automatic, 2 dark, 3 light. */
  color_scheme?: 1 | 2 | 3;
  /** 1 automatic, 2 always, 3 never. */
  demote_inactive_streams?: 1 | 2 | 3;
  /** 1 compact, 2 with status, 3 with avatar and status. */
  user_list_style?: 1 | 2 | 3;
  /** 1 all channels, 2 unmuted channels and topics, 3 no channels. */
  web_stream_unreads_count_display_policy?: 1 | 2 | 3;
  /** 1 all unread, 2 DMs/mentions/followed topics, 3 DMs and mentions, 4 none. */
  desktop_icon_count_display?: 1 | 2 | 3 | 4;
  /** 1 automatic, 2 always, 3 never. */
  realm_name_in_email_notifications_policy?: 1 | 2 | 3;
  automatically_follow_topics_policy?: FollowPolicy;
  automatically_unmute_topics_in_muted_streams_policy?: FollowPolicy;
  /** 1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators. */
  email_address_visibility?: 1 | 2 | 3 | 4 | 5;
  web_font_size_px?: number;
  /** Percent: 120 means 1.2. */
  web_line_height_percent?: number;
  email_notifications_batching_period_seconds?: number;
  web_home_view?: "recent" | "inbox" | "all_messages";
  emojiset?: "google" | "twitter" | "text";
  web_animate_image_previews?: "always" | "on_hover" | "never";
  resolved_topic_notice_auto_read_policy?: "always" | "except_followed" | "never";
  /** A sound name. */
  notification_sound?: string;
};

export interface PlaygroundParams {
  name: string;
  pygments_language: string;
  /** RFC 6570 template with exactly one variable, `code`, e.g. "https://play.example/?c={code}". */
  url_template: string;
}

const PlaygroundCreated = z.looseObject({ id: z.number().int() });
const DomainAdded = z.looseObject({ new_domain: z.tuple([z.number().int(), z.string()]) });

export function realmApi(ctx: ResourceContext) {
  return {
    /** Change the settings new users start with (PATCH /realm/user_settings_defaults; administrators). */
    updateUserSettingsDefaults: (params: UserSettingsDefaults, options: CallOptions = {}) =>
      ctx.call("PATCH", "/realm/user_settings_defaults", params, options),

    /** Add a code playground (POST /realm/playgrounds, feature level 49). */
    async createPlayground(params: PlaygroundParams, options: CallOptions = {}) {
      requireFeature(ctx.state, "playgrounds", "Adding a code playground (POST /realm/playgrounds)");
      let wire: Params = { ...params };
      if (!supports(ctx.state, "playgroundUrlTemplate")) {
        // Before FL 196 the server took a prefix the code was appended to.
        if (!params.url_template.endsWith("{code}")) {
          const what = "A playground url_template with {code} anywhere but at the end";
          requireFeature(ctx.state, "playgroundUrlTemplate", what);
        }
        wire = {
          name: params.name,
          pygments_language: params.pygments_language,
          url_prefix: params.url_template.slice(0, -6),
        };
      }
      return ctx.call("POST", "/realm/playgrounds", wire, options, PlaygroundCreated);
    },

    /** Allow an email domain for sign-ups (POST /realm/domains; owners only). Returns `[id, domain]`. */
    addDomain: (params: { domain: string; allow_subdomains: boolean }, options: CallOptions = {}) =>
      ctx.call("POST", "/realm/domains", params, options, DomainAdded),
  };
}

const EmojiData = z.looseObject({ code_to_names: z.record(z.string(), z.array(z.string())) });

/** Facts about the server itself. */
export function serverApi(ctx: ResourceContext) {
  return {
    /**
     * Version, feature level and public settings (GET /server_settings). Sent without credentials,
     * so it works (and tells the server apart) even when the API key is wrong. Teaches the client
     * the server's feature level.
     */
    async settings(options: CallOptions = {}) {
      const data = await ctx.call("GET", "/server_settings", {}, { ...options, auth: false }, ServerSettings);
      ctx.state.featureLevel = data.zulip_feature_level;
      return data;
    },

    /**
     * The server's unicode emoji names by emoji code, the canonical name first: the file the
     * register response's `server_emoji_data_url` names (FL 140), read without credentials.
     * `path`: that file's path below the server's origin (the caller checks the origin).
     */
    emojiData: (path: string, options: CallOptions = {}) =>
      ctx.call("GET", path, {}, { ...options, auth: false, site: true }, EmojiData),
  };
}
