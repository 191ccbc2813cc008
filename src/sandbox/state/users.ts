/**
 * Users: lookups, who may see whose real email, and the User / own-user wire records.
 */
import { createHash } from "node:crypto";
import type { SandboxData, UserGroupRecord, UserRecord } from "./data.ts";

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

/** Whether `viewer` may see `target`'s real email (the rule behind `delivery_email`). */
export function canSeeEmail(data: SandboxData, viewer: UserRecord, target: UserRecord): boolean {
  if (target.is_bot || viewer.user_id === target.user_id) return true;
  switch (emailVisibility(data, target)) {
    case 1:
      return true;
    case 2:
      return viewer.role <= 400;
    case 3:
      return viewer.role <= 200;
    case 5:
      return viewer.role <= 300;
    default:
      return false;
  }
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

export interface UserViewOptions {
  clientGravatar: boolean;
  includeCustomProfileFields: boolean;
}

/** The User record as GET /users and GET /users/{id} return it, seen by `viewer`. */
export function userToApi(
  data: SandboxData,
  viewer: UserRecord,
  user: UserRecord,
  opts: UserViewOptions,
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

export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#x27;");
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

export function userGroupView(data: SandboxData, g: UserGroupRecord) {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    members: g.members,
    direct_subgroup_ids: g.subgroups,
    is_system_group: g.is_system_group,
    deactivated: g.deactivated,
    date_created: data.realm.date_created,
    creator_id: null,
  };
}
