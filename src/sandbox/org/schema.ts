/**
 * The org file: who and what exists in a sandbox at start. One zod schema is the source of truth;
 * `OrgInput` is what `startSandbox({ org })` accepts as an object, `Org` the parsed form.
 */
import { z } from "zod";
import {
  DEFAULT_CHANNEL_MOVERS,
  DEFAULT_MOVE_LIMIT_SECONDS,
  DEFAULT_TOPIC_MOVERS,
  DEFAULT_TOPIC_RESOLVERS,
  PROFILE_FIELD_TYPES,
} from "../state/data.ts";

const email = z.string().trim().min(3).includes("@", { message: "must be an email address (name@host)" });
const apiKey = z
  .string()
  .regex(/^[A-Za-z0-9]{32}$/, { message: "must be exactly 32 letters or digits" })
  .optional();

const roleName = z.enum(["owner", "admin", "moderator", "member", "guest"]);

const userSettings = z.record(z.string(), z.union([z.boolean(), z.number(), z.string()]));

export const OrgUser = z.strictObject({
  email,
  full_name: z.string().min(1),
  role: roleName.default("member"),
  api_key: apiKey,
  timezone: z.string().default(""),
  is_active: z.boolean().default(true),
  /** Custom profile field name → value (a string, or a list of emails for a `user` field). */
  profile_data: z.record(z.string(), z.union([z.string(), z.array(z.string())])).default({}),
  /** User settings such as `receives_typing_notifications: false`. */
  settings: userSettings.default({}),
  date_joined: z.string().optional(),
});
export type OrgUser = z.infer<typeof OrgUser>;

export const OrgBot = z.strictObject({
  email,
  full_name: z.string().min(1),
  type: z.enum(["generic", "incoming", "outgoing", "embedded"]).default("generic"),
  /** Email of the owning user. */
  owner: email.optional(),
  role: roleName.default("member"),
  api_key: apiKey,
  is_active: z.boolean().default(true),
  default_all_public_streams: z.boolean().default(false),
  outgoing: z
    .strictObject({
      url: z.url({ message: "must be an http(s) URL" }),
      token: apiKey,
      interface: z.enum(["zulip", "slack"]).default("zulip"),
    })
    .optional(),
  settings: userSettings.default({}),
});
export type OrgBot = z.infer<typeof OrgBot>;

export const OrgChannel = z.strictObject({
  name: z.string().trim().min(1).max(60),
  privacy: z.enum(["public", "private", "web-public"]).default("public"),
  archived: z.boolean().default(false),
  description: z.string().max(1024).default(""),
  /** Emails of subscribed users and bots. */
  subscribers: z.array(email).default([]),
  /** Name of a channel folder declared under `channel_folders`. */
  folder: z.string().optional(),
  history_public_to_subscribers: z.boolean().optional(),
  topics_policy: z
    .enum(["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"])
    .default("inherit"),
  is_default: z.boolean().default(false),
  /**
   * Who administers the channel, and who may move its messages to another channel or topic besides
   * the realm's settings: emails and group names (a system group such as `role:moderators` too).
   * Unset: its creator (none for a channel of this file) administers it, nobody else is named.
   */
  can_administer_channel_group: z.array(z.string()).optional(),
  can_move_messages_out_of_channel_group: z.array(z.string()).optional(),
  can_move_messages_within_channel_group: z.array(z.string()).optional(),
  can_resolve_topics_group: z.array(z.string()).optional(),
});
export type OrgChannel = z.infer<typeof OrgChannel>;
/** The group settings a channel of the org file may name. */
export const CHANNEL_SETTINGS = [
  "can_administer_channel_group",
  "can_move_messages_out_of_channel_group",
  "can_move_messages_within_channel_group",
  "can_resolve_topics_group",
] as const;

export const OrgUserGroup = z.strictObject({
  name: z.string().trim().min(1),
  description: z.string().default(""),
  members: z.array(email).default([]),
  /** Names of other groups declared in this file. */
  subgroups: z.array(z.string()).default([]),
  /**
   * Who may administer the group, add members, remove members: emails and group names (a system
   * group such as `role:moderators` too). Unset: nobody besides the realm's `can_manage_all_groups`.
   */
  can_manage_group: z.array(z.string()).default([]),
  can_add_members_group: z.array(z.string()).default([]),
  can_remove_members_group: z.array(z.string()).default([]),
});

export const OrgProfileField = z.strictObject({
  name: z.string().trim().min(1),
  type: z.enum(PROFILE_FIELD_TYPES).default("short_text"),
  hint: z.string().default(""),
  /** For `choice`: the allowed values. */
  choices: z.array(z.string()).optional(),
  editable_by_user: z.boolean().default(true),
  required: z.boolean().default(false),
  display_in_profile_summary: z.boolean().default(false),
});

export const OrgFolder = z.strictObject({
  name: z.string().trim().min(1).max(60),
  description: z.string().default(""),
});

/** A system group a realm permission may name, role:everyone included. */
const roleGroup = z.enum([
  "role:everyone",
  "role:members",
  "role:moderators",
  "role:administrators",
  "role:owners",
  "role:nobody",
]);

const visibility = z.enum(["everyone", "members", "admins", "nobody", "moderators"]);

export const OrgRealm = z.strictObject({
  name: z.string().min(1).default("Sandbox"),
  host: z.string().min(1).default("sandbox.example"),
  /** Name of the channel that receives message reports; omit to disable reporting. */
  moderation_request_channel: z.string().nullable().default(null),
  email_address_visibility: visibility.default("everyone"),
  empty_topic_display_name: z.string().min(1).default("general chat"),
  feature_level: z.number().int().min(1).optional(),
  /** The system group whose members may administer every user group (add and remove members). */
  can_manage_all_groups: z
    .enum(["role:owners", "role:administrators", "role:moderators", "role:members", "role:nobody"])
    .default("role:administrators"),
  allow_edit_history: z.boolean().default(true),
  /** Seconds after sending that its sender may still edit a message's content; null: no limit. */
  message_content_edit_limit_seconds: z.number().int().min(1).nullable().default(null),
  /** The system group whose members may move messages to another topic of their channel. */
  can_move_messages_between_topics_group: roleGroup.default(DEFAULT_TOPIC_MOVERS),
  /** Seconds after sending that a message may still be moved to another topic, below moderators; null: no limit. */
  move_messages_within_stream_limit_seconds: z
    .number()
    .int()
    .min(1)
    .nullable()
    .default(DEFAULT_MOVE_LIMIT_SECONDS),
  /** The system group whose members may move messages to another channel (the server refuses role:everyone). */
  can_move_messages_between_channels_group: z
    .enum(["role:members", "role:moderators", "role:administrators", "role:owners", "role:nobody"])
    .default(DEFAULT_CHANNEL_MOVERS),
  /** The system group whose members may resolve and unresolve topics (no time limit). */
  can_resolve_topics_group: roleGroup.default(DEFAULT_TOPIC_RESOLVERS),
  /** Seconds after sending that a message may still be moved to another channel, below moderators; null: no limit. */
  move_messages_between_streams_limit_seconds: z
    .number()
    .int()
    .min(1)
    .nullable()
    .default(DEFAULT_MOVE_LIMIT_SECONDS),
  profile_field_editing_allowed: z.boolean().default(true),
  default_language: z.string().default("en"),
});

export const Org = z.strictObject({
  realm: OrgRealm.default(OrgRealm.parse({})),
  users: z.array(OrgUser).default([]),
  bots: z.array(OrgBot).default([]),
  channels: z.array(OrgChannel).default([]),
  channel_folders: z.array(OrgFolder).default([]),
  user_groups: z.array(OrgUserGroup).default([]),
  custom_profile_fields: z.array(OrgProfileField).default([]),
  playgrounds: z
    .array(z.strictObject({ name: z.string(), pygments_language: z.string(), url_template: z.string() }))
    .default([]),
  realm_domains: z
    .array(z.strictObject({ domain: z.string(), allow_subdomains: z.boolean().default(false) }))
    .default([]),
});
export type Org = z.infer<typeof Org>;
/** What `startSandbox({ org })` accepts when given an object rather than a path. */
export type OrgInput = z.input<typeof Org>;
