/**
 * The sandbox's whole state as plain JSON-serialisable records, so `--data` persistence is a
 * single `JSON.stringify`. Field names follow the wire format where a record mirrors one.
 */

export type RoleValue = 100 | 200 | 300 | 400 | 600;
export type BotTypeValue = 1 | 2 | 3 | 4;

export interface OutgoingService {
  url: string;
  token: string;
  interface: "zulip" | "slack";
}

export interface UserRecord {
  user_id: number;
  /** The real email; also the login (compared case-insensitively). */
  delivery_email: string;
  full_name: string;
  role: RoleValue;
  is_bot: boolean;
  bot_type: BotTypeValue | null;
  bot_owner_id: number | null;
  api_key: string;
  timezone: string;
  is_active: boolean;
  date_joined: string;
  avatar_version: number;
  /** Custom profile field id (string) → raw value (string, or JSON text for the Users type). */
  profile_data: Record<string, string>;
  /** Personal recipient id, used by 1:1 direct messages. */
  recipient_id: number;
  /** Per-user settings (typing notifications and the like); defaults fill the rest. */
  settings: Record<string, boolean | number | string>;
  default_all_public_streams: boolean;
  outgoing: OutgoingService | null;
  push_tokens: { kind: "android" | "apns"; token: string }[];
  /** Cross-realm system bots (the Notification Bot): not listed among the realm's users. */
  system_bot: boolean;
}

export interface StreamRecord {
  stream_id: number;
  name: string;
  description: string;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  is_archived: boolean;
  date_created: number;
  creator_id: number | null;
  folder_id: number | null;
  recipient_id: number;
  topics_policy: "inherit" | "allow_empty_topic" | "disable_empty_topic" | "empty_topic_only";
  message_retention_days: number | null;
  is_default: boolean;
  /** Who administers the channel (moves and renames included); unset: its creator alone. */
  can_administer_channel_group?: GroupSettingRecord;
  /** Who may move its messages to another channel, besides the realm's movers; unset: nobody named. */
  can_move_messages_out_of_channel_group?: GroupSettingRecord;
  /** Who may move its messages to another topic, besides the realm's movers; unset: nobody named. */
  can_move_messages_within_channel_group?: GroupSettingRecord;
  /** Who may resolve its topics, besides the realm's resolvers; unset: nobody named. */
  can_resolve_topics_group?: GroupSettingRecord;
}

export interface SubscriptionRecord {
  stream_id: number;
  user_id: number;
  active: boolean;
  color: string;
  is_muted: boolean;
  pin_to_top: boolean;
  /** Largest message id that existed when this user (last) subscribed: protected history starts after it. */
  subscribed_after_message_id: number;
}

export interface ReactionRecord {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

/** One stored edit, newest first, in the server's stored `edit_history` format. */
export interface EditRecord {
  user_id: number | null;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_topic?: string;
  topic?: string;
  prev_stream?: number;
  stream?: number;
}

export interface MessageRecord {
  id: number;
  sender_id: number;
  type: "stream" | "private";
  stream_id: number | null;
  /** Recipient id: the stream's, the 1:1 partner's personal one, or the group DM's. */
  recipient_id: number;
  /** Every participant of a DM conversation (sorted, includes the sender); [] for streams. */
  dm_user_ids: number[];
  topic: string;
  content: string;
  rendered_content: string;
  timestamp: number;
  client: string;
  reactions: ReactionRecord[];
  edit_history: EditRecord[];
  last_edit_timestamp: number | null;
  last_moved_timestamp: number | null;
  /** User id (string) → that user's flags; a key exists for every user who received it. */
  flags: Record<string, string[]>;
  /** A Notification Bot notice that a topic was resolved or unresolved (undone within a minute). */
  resolve_notice?: true;
}

export interface DirectGroupRecord {
  recipient_id: number;
  user_ids: number[];
}

/** A group-setting value: a group's id, or users and groups named directly. */
export type GroupSettingRecord = number | { direct_members: number[]; direct_subgroups: number[] };

export interface UserGroupRecord {
  id: number;
  name: string;
  description: string;
  members: number[];
  subgroups: number[];
  is_system_group: boolean;
  deactivated: boolean;
  /** Who may administer the group (members and subgroups included); unset: nobody named. */
  can_manage_group?: GroupSettingRecord;
  /** Who may add members to it; unset: nobody named. */
  can_add_members_group?: GroupSettingRecord;
  /** Who may remove members from it; unset: nobody named. */
  can_remove_members_group?: GroupSettingRecord;
}

/** Custom profile field types, in the order of the server's numeric type ids (1-based). */
export const PROFILE_FIELD_TYPES = [
  "short_text",
  "long_text",
  "choice",
  "date",
  "link",
  "user",
  "external_account",
  "pronouns",
] as const;

export interface ProfileFieldRecord {
  id: number;
  name: string;
  type: (typeof PROFILE_FIELD_TYPES)[number];
  hint: string;
  field_data: string;
  order: number;
  editable_by_user: boolean;
  display_in_profile_summary: boolean;
  required: boolean;
}

export interface ChannelFolderRecord {
  id: number;
  name: string;
  description: string;
  rendered_description: string;
  order: number;
  creator_id: number | null;
  date_created: number;
  is_archived: boolean;
}

export interface SnippetRecord {
  id: number;
  user_id: number;
  title: string;
  content: string;
  date_created: number;
}

export interface ScheduledRecord {
  scheduled_message_id: number;
  sender_id: number;
  type: "stream" | "private";
  /** Stream id, or the DM recipients as sent (sender excluded unless to self). */
  to: number | number[];
  topic: string;
  content: string;
  rendered_content: string;
  scheduled_delivery_timestamp: number;
  read_by_sender: boolean | null;
  client: string;
  failed: boolean;
  failure_message: string | null;
  delivered: boolean;
  delivered_message_id: number | null;
}

export interface PlaygroundRecord {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

export interface DomainRecord {
  id: number;
  domain: string;
  allow_subdomains: boolean;
}

/** The server's default `move_messages_within_stream_limit_seconds`: 7 days. */
export const DEFAULT_MOVE_LIMIT_SECONDS = 7 * 24 * 60 * 60;
/** The server's default groups of who may move messages to another topic and to another channel. */
export const DEFAULT_TOPIC_MOVERS = "role:everyone";
export const DEFAULT_CHANNEL_MOVERS = "role:members";
/** The server's default group of who may resolve topics. */
export const DEFAULT_TOPIC_RESOLVERS = "role:everyone";

export interface RealmRecord {
  id: number;
  name: string;
  /** Host used by placeholder emails (`user{id}@{host}`) and realm_bot_domain. */
  host: string;
  string_id: string;
  moderation_request_channel_id: number | null;
  /** 1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators. */
  email_address_visibility: 1 | 2 | 3 | 4 | 5;
  empty_topic_display_name: string;
  feature_level: number;
  /** The system group whose members may administer every user group (default `role:administrators`). */
  can_manage_all_groups?: string;
  allow_edit_history: boolean;
  /** Seconds after sending that content may still be edited; null (or absent): no limit. */
  message_content_edit_limit_seconds?: number | null;
  /** The system group whose members may move messages between topics (absent: `role:everyone`). */
  can_move_messages_between_topics_group?: string;
  /** Seconds after sending that a message may be moved to another topic (absent: 7 days; null: no limit). */
  move_messages_within_stream_limit_seconds?: number | null;
  /** The system group whose members may resolve and unresolve topics (absent: `role:everyone`). */
  can_resolve_topics_group?: string;
  /** The system group whose members may move messages between channels (absent: `role:members`). */
  can_move_messages_between_channels_group?: string;
  /** Seconds after sending that a message may be moved to another channel (absent: 7 days; null: no limit). */
  move_messages_between_streams_limit_seconds?: number | null;
  /** Whether users may edit their own custom profile fields at all. */
  profile_field_editing_allowed: boolean;
  date_created: number;
  /**
   * The organization's unique id (`realm_uuid` from feature level 466): a fresh one for each
   * sandbox built from an org, kept in its data file, so a client can tell one sandbox from another.
   */
  uuid: string;
  default_language: string;
  user_settings_defaults: Record<string, boolean | number | string>;
}

const COUNTER_KINDS = [
  "user",
  "recipient",
  "stream",
  "message",
  "group",
  "field",
  "folder",
  "snippet",
  "scheduled",
  "playground",
  "domain",
] as const;
export type Counters = Record<(typeof COUNTER_KINDS)[number], number>;

export interface SandboxData {
  version: 1;
  realm: RealmRecord;
  counters: Counters;
  users: UserRecord[];
  streams: StreamRecord[];
  subscriptions: SubscriptionRecord[];
  messages: MessageRecord[];
  directGroups: DirectGroupRecord[];
  userGroups: UserGroupRecord[];
  profileFields: ProfileFieldRecord[];
  channelFolders: ChannelFolderRecord[];
  snippets: SnippetRecord[];
  scheduled: ScheduledRecord[];
  playgrounds: PlaygroundRecord[];
  domains: DomainRecord[];
}

export function emptyData(realm: RealmRecord): SandboxData {
  return {
    version: 1,
    realm,
    counters: Object.fromEntries(COUNTER_KINDS.map((k) => [k, 0])) as Counters,
    users: [],
    streams: [],
    subscriptions: [],
    messages: [],
    directGroups: [],
    userGroups: [],
    profileFields: [],
    channelFolders: [],
    snippets: [],
    scheduled: [],
    playgrounds: [],
    domains: [],
  };
}

/** Take the next id of a kind. Ids start at 1 and never repeat. */
export function nextId(data: SandboxData, kind: keyof Counters): number {
  data.counters[kind] += 1;
  return data.counters[kind];
}
