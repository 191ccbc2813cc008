/**
 * A `realm_user` `update` event's `person` applied to a cached user (NOTES §4.8). Each event
 * carries `user_id` and one changed field group; the few whose name differs from the user
 * record's field are translated, the rest are copied as they are.
 */
import type { User } from "../../wire/records.ts";

/** Roles: 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest. */
type Role = User["role"];

/**
 * The user after `person`'s change (a new object; `user` is not modified).
 *
 * @example
 * ```ts
 * applyPersonUpdate(user, { user_id: 8, role: 200 }); // { ...user, role: 200, is_admin: true, is_owner: false, is_guest: false }
 * applyPersonUpdate(user, { user_id: 8, new_email: "user8@chat.example.org" }); // email changed
 * ```
 */
export function applyPersonUpdate(user: User, person: Record<string, unknown>): User {
  const next: Record<string, unknown> = { ...user };
  for (const [key, value] of Object.entries(person)) {
    switch (key) {
      case "user_id":
        break;
      case "new_email":
        if (typeof value === "string") next.email = value;
        break;
      case "role":
        if (typeof value === "number") Object.assign(next, roleFields(value as Role));
        break;
      case "custom_profile_field":
        next.profile_data = withProfileField(user.profile_data, value);
        break;
      default:
        next[key] = value;
    }
  }
  return next as User;
}

/** The role and the booleans derived from it, as the user record has them. */
export function roleFields(role: Role): Pick<User, "role" | "is_owner" | "is_admin" | "is_guest"> {
  return { role, is_owner: role === 100, is_admin: role <= 200, is_guest: role === 600 };
}

function withProfileField(data: User["profile_data"], change: unknown): User["profile_data"] {
  if (typeof change !== "object" || change === null) return data;
  const { id, value, rendered_value } = change as { id?: unknown; value?: unknown; rendered_value?: unknown };
  if (typeof id !== "number") return data;
  const next = { ...data };
  if (typeof value !== "string") delete next[String(id)];
  else next[String(id)] = { value, ...(typeof rendered_value === "string" ? { rendered_value } : {}) };
  return next;
}
