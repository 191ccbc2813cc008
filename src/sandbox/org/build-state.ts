/**
 * Turn a validated org into the sandbox's initial state: ids, recipients, API keys, system groups
 * and the Notification Bot (which the real server keeps in its internal realm).
 */

import { randomInt, randomUUID } from "node:crypto";
import { SANDBOX_FEATURE_LEVEL } from "../../wire/feature-levels.ts";
import {
  emptyData,
  type GroupSettingRecord,
  nextId,
  type RoleValue,
  type SandboxData,
  type StreamRecord,
  type UserGroupRecord,
  type UserRecord,
} from "../state/data.ts";
import { renderDescription } from "../state/markdown.ts";
import { CHANNEL_SETTINGS, type Org, type OrgUser } from "./schema.ts";

export const ROLES: Record<OrgUser["role"], RoleValue> = {
  owner: 100,
  admin: 200,
  moderator: 300,
  member: 400,
  guest: 600,
};
export const BOT_TYPES = { generic: 1, incoming: 2, outgoing: 3, embedded: 4 } as const;
const visibility = { everyone: 1, members: 2, admins: 3, nobody: 4, moderators: 5 } as const;

/** Colours handed to new subscriptions in turn, like the server's palette. */
const STREAM_COLORS = ["#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd"];

/** System groups, as named by the server; members follow roles. */
export const SYSTEM_GROUPS: { name: string; maxRole: number }[] = [
  { name: "role:nobody", maxRole: 0 },
  { name: "role:owners", maxRole: 100 },
  { name: "role:administrators", maxRole: 200 },
  { name: "role:moderators", maxRole: 300 },
  { name: "role:fullmembers", maxRole: 400 },
  { name: "role:members", maxRole: 400 },
  { name: "role:everyone", maxRole: 600 },
  { name: "role:internet", maxRole: 600 },
];

export const NOTIFICATION_BOT_EMAIL = "notification-bot@zulip.com";

export function buildState(org: Org, nowMs: number): SandboxData {
  const now = Math.floor(nowMs / 1000);
  const data = emptyData({
    id: 2,
    name: org.realm.name,
    host: org.realm.host,
    string_id: org.realm.host.split(".")[0] ?? "sandbox",
    moderation_request_channel_id: null,
    email_address_visibility: visibility[org.realm.email_address_visibility],
    empty_topic_display_name: org.realm.empty_topic_display_name,
    feature_level: org.realm.feature_level ?? SANDBOX_FEATURE_LEVEL,
    can_manage_all_groups: org.realm.can_manage_all_groups,
    allow_edit_history: org.realm.allow_edit_history,
    message_content_edit_limit_seconds: org.realm.message_content_edit_limit_seconds,
    can_move_messages_between_topics_group: org.realm.can_move_messages_between_topics_group,
    move_messages_within_stream_limit_seconds: org.realm.move_messages_within_stream_limit_seconds,
    can_move_messages_between_channels_group: org.realm.can_move_messages_between_channels_group,
    can_resolve_topics_group: org.realm.can_resolve_topics_group,
    move_messages_between_streams_limit_seconds: org.realm.move_messages_between_streams_limit_seconds,
    profile_field_editing_allowed: org.realm.profile_field_editing_allowed,
    date_created: now,
    uuid: randomUUID(),
    default_language: org.realm.default_language,
    user_settings_defaults: {},
  });
  const iso = new Date(nowMs).toISOString();
  addUser(data, {
    delivery_email: NOTIFICATION_BOT_EMAIL,
    full_name: "Notification Bot",
    role: 400,
    is_bot: true,
    bot_type: 1,
    system_bot: true,
    date_joined: iso,
  });
  org.custom_profile_fields.forEach((f, i) => {
    const choices = Object.fromEntries(
      (f.choices ?? []).map((c, j) => [String(j), { text: c, order: String(j) }]),
    );
    data.profileFields.push({
      id: nextId(data, "field"),
      name: f.name,
      type: f.type,
      hint: f.hint,
      field_data: f.type === "choice" ? JSON.stringify(choices) : "",
      order: i + 1,
      editable_by_user: f.editable_by_user,
      display_in_profile_summary: f.display_in_profile_summary,
      required: f.required,
    });
  });
  const byEmail = (e: string) => data.users.find((u) => u.delivery_email.toLowerCase() === e.toLowerCase());
  for (const u of org.users) {
    addUser(data, {
      delivery_email: u.email,
      full_name: u.full_name,
      role: ROLES[u.role],
      api_key: u.api_key,
      timezone: u.timezone,
      is_active: u.is_active,
      date_joined: u.date_joined ?? iso,
      settings: u.settings,
    });
  }
  for (const b of org.bots) {
    addUser(data, {
      delivery_email: b.email,
      full_name: b.full_name,
      role: ROLES[b.role],
      is_bot: true,
      bot_type: BOT_TYPES[b.type],
      bot_owner_id: b.owner ? (byEmail(b.owner)?.user_id ?? null) : null,
      api_key: b.api_key,
      is_active: b.is_active,
      date_joined: iso,
      settings: b.settings,
      default_all_public_streams: b.default_all_public_streams,
      outgoing: b.outgoing
        ? {
            url: b.outgoing.url,
            token: b.outgoing.token ?? generateApiKey(),
            interface: b.outgoing.interface,
          }
        : null,
    });
  }
  // Profile values referring to users are stored as JSON id lists, as the server stores them.
  org.users.forEach((u) => {
    const rec = byEmail(u.email)!;
    for (const [name, value] of Object.entries(u.profile_data)) {
      const field = data.profileFields.find((f) => f.name === name)!;
      rec.profile_data[String(field.id)] = Array.isArray(value)
        ? JSON.stringify(value.map((e) => byEmail(e)?.user_id ?? 0))
        : value;
    }
  });
  for (const f of org.channel_folders) {
    const id = nextId(data, "folder");
    data.channelFolders.push({
      id,
      name: f.name,
      description: f.description,
      rendered_description: renderDescription(data, f.description ?? "", nowMs),
      order: id,
      creator_id: null,
      date_created: now,
      is_archived: false,
    });
  }
  for (const c of org.channels) {
    const invite = c.privacy === "private";
    const { stream_id: streamId } = addStream(data, {
      name: c.name,
      description: c.description,
      invite_only: invite,
      is_web_public: c.privacy === "web-public",
      history_public_to_subscribers: c.history_public_to_subscribers ?? !invite,
      is_archived: c.archived,
      date_created: now,
      folder_id: c.folder ? (data.channelFolders.find((f) => f.name === c.folder)?.id ?? null) : null,
      topics_policy: c.topics_policy,
      is_default: c.is_default,
    });
    for (const email of c.subscribers) {
      const user = byEmail(email)!;
      addSubscription(data, streamId, user.user_id, 0);
    }
  }
  const mod = org.realm.moderation_request_channel;
  if (mod !== null) {
    data.realm.moderation_request_channel_id =
      data.streams.find((s) => s.name.toLowerCase() === mod.toLowerCase())?.stream_id ?? null;
  }
  for (const g of SYSTEM_GROUPS) {
    data.userGroups.push(group(data, g.name, `System group ${g.name}`, true));
  }
  refreshSystemGroups(data);
  const groups = org.user_groups.map((g) => group(data, g.name, g.description, false));
  /** Emails and group names as a group-setting value (the file's groups are not stored yet). */
  const setting = (names: string[]): GroupSettingRecord => ({
    direct_members: names.filter((n) => byEmail(n)).map((e) => byEmail(e)!.user_id),
    direct_subgroups: names
      .filter((n) => !byEmail(n))
      .map((n) => [...data.userGroups, ...groups].find((x) => x.name === n)!.id),
  });
  org.user_groups.forEach((g, i) => {
    groups[i]!.members = g.members.map((e) => byEmail(e)!.user_id);
    groups[i]!.subgroups = g.subgroups.map((s) => groups.find((x) => x.name === s)!.id);
    groups[i]!.can_manage_group = setting(g.can_manage_group);
    groups[i]!.can_add_members_group = setting(g.can_add_members_group);
    groups[i]!.can_remove_members_group = setting(g.can_remove_members_group);
  });
  data.userGroups.push(...groups);
  org.channels.forEach((c) => {
    const stream = data.streams.find((s) => s.name === c.name)!;
    for (const key of CHANNEL_SETTINGS) if (c[key]) stream[key] = setting(c[key]);
  });
  for (const p of org.playgrounds) data.playgrounds.push({ id: nextId(data, "playground"), ...p });
  for (const d of org.realm_domains) data.domains.push({ id: nextId(data, "domain"), ...d });
  return data;
}

function group(data: SandboxData, name: string, description: string, system: boolean): UserGroupRecord {
  return {
    id: nextId(data, "group"),
    name,
    description,
    members: [],
    subgroups: [],
    is_system_group: system,
    deactivated: false,
  };
}

/** System group membership follows roles; recompute it after any role change. */
export function refreshSystemGroups(data: SandboxData): void {
  const people = data.users.filter((u) => u.is_active && !u.system_bot);
  for (const spec of SYSTEM_GROUPS) {
    const g = data.userGroups.find((x) => x.is_system_group && x.name === spec.name);
    if (g) g.members = people.filter((u) => u.role <= spec.maxRole).map((u) => u.user_id);
  }
}

type NewStream = Pick<
  StreamRecord,
  "name" | "description" | "invite_only" | "history_public_to_subscribers"
> &
  Partial<StreamRecord> & { date_created: number };

/** Add one channel with fresh ids; unset fields take a new channel's defaults. */
export function addStream(data: SandboxData, fields: NewStream): StreamRecord {
  const stream: StreamRecord = {
    stream_id: nextId(data, "stream"),
    is_web_public: false,
    is_archived: false,
    creator_id: null,
    folder_id: null,
    recipient_id: nextId(data, "recipient"),
    topics_policy: "inherit",
    message_retention_days: null,
    is_default: false,
    ...fields,
  };
  data.streams.push(stream);
  return stream;
}

/** Store a new active subscription; protected history starts after `afterMessageId`. */
export function addSubscription(data: SandboxData, streamId: number, userId: number, afterMessageId: number) {
  data.subscriptions.push({
    stream_id: streamId,
    user_id: userId,
    active: true,
    color: STREAM_COLORS[(streamId - 1) % STREAM_COLORS.length]!,
    is_muted: false,
    pin_to_top: false,
    subscribed_after_message_id: afterMessageId,
  });
}

/** The fields a new account needs; the others it may set (unset ones take a new account's defaults). */
export type NewUser = Pick<UserRecord, "delivery_email" | "full_name" | "role" | "date_joined"> &
  Partial<Omit<UserRecord, "user_id" | "avatar_version" | "profile_data" | "recipient_id" | "push_tokens">>;

/** Add one user or bot with fresh ids; returns the stored record. */
export function addUser(data: SandboxData, u: NewUser): UserRecord {
  const rec: UserRecord = {
    user_id: nextId(data, "user"),
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    role: u.role,
    is_bot: u.is_bot ?? false,
    bot_type: u.bot_type ?? null,
    bot_owner_id: u.bot_owner_id ?? null,
    api_key: u.api_key ?? generateApiKey(),
    timezone: u.timezone ?? "",
    is_active: u.is_active ?? true,
    date_joined: u.date_joined,
    avatar_version: 1,
    profile_data: {},
    recipient_id: nextId(data, "recipient"),
    settings: u.settings ?? {},
    default_all_public_streams: u.default_all_public_streams ?? false,
    outgoing: u.outgoing ?? null,
    push_tokens: [],
    system_bot: u.system_bot ?? false,
  };
  data.users.push(rec);
  return rec;
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh 32-character alphanumeric key, the shape the real server's keys and tokens have. */
export function generateApiKey(): string {
  let key = "";
  for (let i = 0; i < 32; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}
