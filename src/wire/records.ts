/**
 * Records of the chat server's REST interface as zod schemas, snake_case as on the wire. Object
 * schemas are loose: fields added by later feature levels pass through instead of being dropped.
 */
import { z } from "zod";

/** Role integers: 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest. */
const Role = z.union([z.literal(100), z.literal(200), z.literal(300), z.literal(400), z.literal(600)]);

/** Bot types: 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded. */
const BotType = z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)]);

/** Either a user group id or an anonymous group of direct members and subgroups. */
const GroupSettingValue = z.union([
  z.number().int(),
  z.looseObject({ direct_members: z.array(z.number().int()), direct_subgroups: z.array(z.number().int()) }),
]);

/** Custom profile field id (as a string key) → value. */
const ProfileData = z.record(
  z.string(),
  z.looseObject({ value: z.string(), rendered_value: z.string().optional() }),
);

export const User = z.looseObject({
  user_id: z.number().int(),
  delivery_email: z.string().nullable(),
  email: z.string(),
  full_name: z.string(),
  date_joined: z.string(),
  is_active: z.boolean(),
  is_owner: z.boolean(),
  is_admin: z.boolean(),
  is_guest: z.boolean(),
  is_bot: z.boolean(),
  bot_type: BotType.nullable().optional(),
  bot_owner_id: z.number().int().nullable().optional(),
  role: Role,
  timezone: z.string(),
  avatar_url: z.string().nullable().optional(),
  avatar_version: z.number().int(),
  is_imported_stub: z.boolean().optional(),
  is_deleted: z.boolean().optional(),
  profile_data: ProfileData.optional(),
});
/** A user of the organization, as the server describes it (humans and bots). */
export type User = z.infer<typeof User>;

/** GET /users/me: the authenticated account, fields at the top level. */
export const OwnUser = User.omit({ bot_type: true, bot_owner_id: true, is_deleted: true }).extend({
  delivery_email: z.string(),
  max_message_id: z.number().int().optional(),
});

const TopicsPolicy = z.enum(["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"]);

/** Element of `streams` in GET /streams. */
export const Channel = z.looseObject({
  stream_id: z.number().int(),
  name: z.string(),
  is_archived: z.boolean().optional(),
  description: z.string(),
  rendered_description: z.string(),
  date_created: z.number().int(),
  creator_id: z.number().int().nullable(),
  invite_only: z.boolean(),
  is_web_public: z.boolean(),
  stream_post_policy: z.number().int(),
  is_announcement_only: z.boolean(),
  message_retention_days: z.number().int().nullable(),
  history_public_to_subscribers: z.boolean(),
  topics_policy: TopicsPolicy.optional(),
  first_message_id: z.number().int().nullable(),
  folder_id: z.number().int().nullable().optional(),
  is_recently_active: z.boolean().optional(),
  can_add_subscribers_group: GroupSettingValue.optional(),
  can_remove_subscribers_group: GroupSettingValue.optional(),
  can_administer_channel_group: GroupSettingValue.optional(),
  can_delete_any_message_group: GroupSettingValue.optional(),
  can_delete_own_message_group: GroupSettingValue.optional(),
  can_move_messages_out_of_channel_group: GroupSettingValue.optional(),
  can_move_messages_within_channel_group: GroupSettingValue.optional(),
});
export type Channel = z.infer<typeof Channel>;

/** Element of `message_history` (GET /messages/{id}/history), oldest first. */
export const EditSnapshot = z.looseObject({
  topic: z.string(),
  prev_topic: z.string().optional(),
  stream: z.number().int().optional(),
  prev_stream: z.number().int().optional(),
  content: z.string(),
  rendered_content: z.string(),
  prev_content: z.string().optional(),
  prev_rendered_content: z.string().optional(),
  user_id: z.number().int().nullable(),
  content_html_diff: z.string().optional(),
  timestamp: z.number().int(),
});

export const Topic = z.looseObject({ name: z.string(), max_id: z.number().int() });

/** A scheduled message as listed by GET /scheduled_messages and carried by its events. */
export const ScheduledMessage = z.looseObject({
  scheduled_message_id: z.number().int(),
  type: z.enum(["stream", "private"]),
  to: z.union([z.number().int(), z.array(z.number().int())]),
  topic: z.string().optional(),
  content: z.string(),
  rendered_content: z.string(),
  scheduled_delivery_timestamp: z.number().int(),
  failed: z.boolean(),
});
export type ScheduledMessage = z.infer<typeof ScheduledMessage>;

export const SavedSnippet = z.looseObject({
  id: z.number().int(),
  title: z.string(),
  content: z.string(),
  date_created: z.number().int(),
});
export type SavedSnippet = z.infer<typeof SavedSnippet>;

/** One entry of PATCH /users/me/profile_data's `data`. */
export const ProfileDataUpdate = z.object({
  id: z.number().int(),
  value: z.union([z.string(), z.null(), z.array(z.number().int())]),
});
export type ProfileDataUpdate = z.infer<typeof ProfileDataUpdate>;

const DisplayRecipientUser = z.looseObject({
  id: z.number().int(),
  email: z.string(),
  full_name: z.string(),
  is_mirror_dummy: z.boolean().optional(),
});

const MessageReaction = z.looseObject({
  emoji_name: z.string(),
  emoji_code: z.string(),
  reaction_type: z.string(),
  user_id: z.number().int(),
});

/** A message as in GET /messages and in `message` events. The topic is in `subject`. */
export const Message = z.looseObject({
  id: z.number().int(),
  sender_id: z.number().int(),
  sender_email: z.string(),
  sender_full_name: z.string(),
  sender_realm_str: z.string().optional(),
  avatar_url: z.string().nullable().optional(),
  client: z.string(),
  content: z.string(),
  content_type: z.string().optional(),
  recipient_id: z.number().int(),
  timestamp: z.number().int(),
  type: z.enum(["stream", "private"]),
  display_recipient: z.union([z.string(), z.array(DisplayRecipientUser)]),
  stream_id: z.number().int().optional(),
  subject: z.string(),
  topic_links: z.array(z.looseObject({ text: z.string(), url: z.string() })).optional(),
  is_me_message: z.boolean().optional(),
  reactions: z.array(MessageReaction).optional(),
  submessages: z.array(z.unknown()).optional(),
  flags: z.array(z.string()).optional(),
  last_edit_timestamp: z.number().int().optional(),
  last_moved_timestamp: z.number().int().optional(),
  rendered_content: z.string().optional(),
});
export type Message = z.infer<typeof Message>;

/** One element of a `subscription` event's `subscriptions` (op `add`). */
export const Subscription = z.looseObject({
  stream_id: z.number().int(),
  name: z.string(),
  description: z.string().optional(),
  invite_only: z.boolean().optional(),
  subscribers: z.array(z.number().int()).optional(),
});

/** A narrow: a list of `[operator, operand]` pairs. */
export const Narrow = z.array(z.tuple([z.string(), z.string()]));
export type Narrow = z.infer<typeof Narrow>;

/** A user group as GET /user_groups lists it (the permission settings from feature level 283-324). */
export const UserGroup = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  /** Direct members' user ids (subgroups' members are not repeated here). */
  members: z.array(z.number().int()),
  direct_subgroup_ids: z.array(z.number().int()),
  is_system_group: z.boolean(),
  /** Feature level 290. */
  deactivated: z.boolean().optional(),
  can_manage_group: GroupSettingValue.optional(),
  can_add_members_group: GroupSettingValue.optional(),
  can_remove_members_group: GroupSettingValue.optional(),
});
export type UserGroup = z.infer<typeof UserGroup>;
