/**
 * Users: lookups, who may see whose real email, the User wire records, and account changes with
 * their `realm_user` / `realm_bot` events, sent to every active user.
 */
import { createHash } from "node:crypto";
import type { SandboxCore } from "../core.ts";
import { addUser, type NewUser, refreshSystemGroups } from "../org/build-state.ts";
import { emitToUsers } from "../queues/emit.ts";
import type {
  GroupSettingRecord,
  OutgoingService,
  RoleValue,
  SandboxData,
  UserGroupRecord,
  UserRecord,
} from "./data.ts";
import { escapeHtml } from "./escape-html.ts";

export function userById(data: SandboxData, id: number): UserRecord | undefined {
  return data.users.find((u) => u.user_id === id);
}

export function userByDeliveryEmail(data: SandboxData, email: string): UserRecord | undefined {
  const key = email.trim().toLowerCase();
  return data.users.find((u) => u.delivery_email.toLowerCase() === key);
}

/** The user's email_address_visibility (user setting, else the realm default). */
export function emailVisibility(data: SandboxData, user: UserRecord): number {
  const own = user.settings.email_address_visibility;
  return typeof own === "number" ? own : data.realm.email_address_visibility;
}

/** The API `email`: the real one when visible to everyone (always for bots), else a placeholder. */
export function apiEmail(data: SandboxData, user: UserRecord): string {
  if (user.is_bot || emailVisibility(data, user) === 1) return user.delivery_email;
  return `user${user.user_id}@${data.realm.host}`;
}

/** By email_address_visibility, the highest role value that sees real emails (4, nobody: none). */
const EMAIL_VISIBLE_UP_TO: Record<number, number> = { 1: 600, 2: 400, 3: 200, 5: 300 };

/** Whether `viewer` may see `target`'s real email (the rule behind `delivery_email`). */
export function canSeeEmail(data: SandboxData, viewer: UserRecord, target: UserRecord): boolean {
  if (target.is_bot || viewer.user_id === target.user_id) return true;
  return viewer.role <= (EMAIL_VISIBLE_UP_TO[emailVisibility(data, target)] ?? 0);
}

/** A gravatar-style URL; `null` when the client computes gravatars itself and may see the email. */
export function avatarUrl(
  data: SandboxData,
  viewer: UserRecord | null,
  target: UserRecord,
  clientGravatar: boolean,
): string | null {
  const visible = viewer ? canSeeEmail(data, viewer, target) : false;
  if (clientGravatar && visible) return null;
  const hash = createHash("md5").update(target.delivery_email.toLowerCase()).digest("hex");
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${target.avatar_version}`;
}

/** The User record as GET /users and GET /users/{id} return it, seen by `viewer`. */
export function userToApi(
  data: SandboxData,
  viewer: UserRecord,
  user: UserRecord,
  opts: { clientGravatar: boolean; includeCustomProfileFields: boolean },
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    email: apiEmail(data, user),
    user_id: user.user_id,
    avatar_version: user.avatar_version,
    is_admin: user.role <= 200,
    is_owner: user.role === 100,
    is_guest: user.role === 600,
    is_bot: user.is_bot,
    full_name: user.full_name,
    timezone: user.timezone,
    is_active: user.is_active,
    date_joined: user.date_joined,
    delivery_email: canSeeEmail(data, viewer, user) ? user.delivery_email : null,
    avatar_url: avatarUrl(data, viewer, user, opts.clientGravatar),
    role: user.role,
    is_imported_stub: false,
  };
  if (user.is_bot) {
    out.bot_type = user.bot_type;
    out.bot_owner_id = user.bot_owner_id;
  } else if (opts.includeCustomProfileFields) {
    out.profile_data = profileDataToApi(data, user);
  }
  return out;
}

/** A bot as `realm_bots` in /register lists it, seen by `viewer`. */
export function botToApi(data: SandboxData, viewer: UserRecord, u: UserRecord) {
  return {
    user_id: u.user_id,
    full_name: u.full_name,
    email: u.delivery_email,
    bot_type: u.bot_type,
    is_active: u.is_active,
    api_key: u.api_key,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: u.default_all_public_streams,
    avatar_url: avatarUrl(data, viewer, u, false),
    owner_id: u.bot_owner_id,
    services: servicesOf(u),
  };
}

/** A bot's outgoing-webhook services as `realm_bots` and `realm_bot` events list them. */
function servicesOf(u: UserRecord) {
  return u.outgoing
    ? [
        {
          base_url: u.outgoing.url,
          token: u.outgoing.token,
          interface: u.outgoing.interface === "zulip" ? 1 : 2,
        },
      ]
    : [];
}

/** Who is told of a bot's changes (`realm_bot` events): the admins and its owner. */
function botWatchers(data: SandboxData, bot: UserRecord): number[] {
  return data.users.filter((u) => u.role <= 200 || u.user_id === bot.bot_owner_id).map((u) => u.user_id);
}

/** `profile_data`: field id → {value, rendered_value?} for every field the user has a value for. */
export function profileDataToApi(
  data: SandboxData,
  user: UserRecord,
): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const field of data.profileFields) {
    const value = user.profile_data[String(field.id)];
    if (value === undefined) continue;
    out[String(field.id)] =
      field.type === "short_text" || field.type === "long_text"
        ? { value, rendered_value: `<p>${escapeHtml(value)}</p>` }
        : { value };
  }
  return out;
}

/** Members of a group, following subgroups (recursively, once each). */
export function groupMemberIds(data: SandboxData, groupId: number, seen = new Set<number>()): Set<number> {
  const out = new Set<number>();
  if (seen.has(groupId)) return out;
  seen.add(groupId);
  const group = data.userGroups.find((g) => g.id === groupId);
  if (!group) return out;
  for (const m of group.members) out.add(m);
  for (const s of group.subgroups) for (const m of groupMemberIds(data, s, seen)) out.add(m);
  return out;
}

const NOBODY = { direct_members: [], direct_subgroups: [] };

/** Is the user in a group-setting value (a group, or users and groups named directly, at any depth)? */
export function inGroupSetting(
  data: SandboxData,
  value: GroupSettingRecord | undefined,
  userId: number,
): boolean {
  if (value === undefined) return false;
  if (typeof value === "number") return groupMemberIds(data, value).has(userId);
  return (
    value.direct_members.includes(userId) ||
    value.direct_subgroups.some((g) => groupMemberIds(data, g).has(userId))
  );
}

/**
 * `ids` without deactivated users: a group's members as the server lists them since feature
 * level 303 (a deactivated user is kept as a member, and listed again once reactivated).
 */
export function activeMembers(data: SandboxData, ids: Iterable<number>): number[] {
  return [...ids].filter((id) => data.users.find((u) => u.user_id === id)?.is_active !== false);
}

export function userGroupView(data: SandboxData, g: UserGroupRecord) {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    members: activeMembers(data, g.members),
    direct_subgroup_ids: g.subgroups,
    is_system_group: g.is_system_group,
    deactivated: g.deactivated,
    date_created: data.realm.date_created,
    creator_id: null,
    ...(g.is_system_group
      ? {}
      : {
          can_manage_group: g.can_manage_group ?? NOBODY,
          can_add_members_group: g.can_add_members_group ?? NOBODY,
          can_remove_members_group: g.can_remove_members_group ?? NOBODY,
        }),
  };
}

/** Emit a realm_user event whose `person` is shaped per receiving user. */
export function emitRealmUser(
  core: SandboxCore,
  op: "add" | "update",
  user: UserRecord,
  fields?: Record<string, unknown>,
): void {
  const data = core.data;
  for (const viewer of data.users.filter((u) => u.is_active && !u.system_bot)) {
    const person =
      op === "add"
        ? {
            ...userToApi(data, viewer, user, { clientGravatar: false, includeCustomProfileFields: true }),
            profile_data: {},
          }
        : { user_id: user.user_id, ...fields };
    emitToUsers(core, [viewer.user_id], { type: "realm_user", op, person });
  }
}

export function createUser(
  core: SandboxCore,
  input: Omit<NewUser, "date_joined"> & { date_joined?: string },
): UserRecord {
  const data = core.data;
  const user = addUser(data, {
    ...input,
    is_bot: (input.bot_type ?? null) !== null,
    date_joined: input.date_joined ?? new Date(core.clock.now()).toISOString(),
    settings: { ...data.realm.user_settings_defaults, ...input.settings },
  });
  refreshSystemGroups(data);
  emitRealmUser(core, "add", user);
  if (user.is_bot) {
    const { api_key, avatar_url, ...bot } = botToApi(data, user, user);
    emitToUsers(core, botWatchers(data, user), { type: "realm_bot", op: "add", bot });
  }
  return user;
}

/**
 * Set the outgoing webhook of an outgoing-webhook or embedded bot (its URL, format and token), as
 * `PATCH /bots/{id}` does with `service_payload_url`, with its `realm_bot` update event.
 */
export function setOutgoingService(core: SandboxCore, bot: UserRecord, service: OutgoingService): void {
  bot.outgoing = { ...service };
  const update = { user_id: bot.user_id, services: servicesOf(bot) };
  emitToUsers(core, botWatchers(core.data, bot), { type: "realm_bot", op: "update", bot: update });
}

/**
 * Change a user's role and/or full name, with one realm_user update event per change (see
 * docs/internals/server-behaviour.md#event-shapes).
 */
export function updateUser(
  core: SandboxCore,
  user: UserRecord,
  changes: { role?: RoleValue; full_name?: string },
): void {
  if (changes.role !== undefined && changes.role !== user.role) {
    user.role = changes.role;
    refreshSystemGroups(core.data);
    emitRealmUser(core, "update", user, { role: changes.role });
  }
  if (changes.full_name !== undefined && changes.full_name !== user.full_name) {
    user.full_name = changes.full_name;
    emitRealmUser(core, "update", user, { full_name: changes.full_name });
  }
}

export function setActive(core: SandboxCore, user: UserRecord, active: boolean): void {
  if (user.is_active === active) return;
  user.is_active = active;
  refreshSystemGroups(core.data);
  emitRealmUser(core, "update", user, { is_active: active });
}
