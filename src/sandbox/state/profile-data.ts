/**
 * PATCH /users/me/profile_data: validate each `{id, value}` against its field type, store it, and
 * send realm_user updates with `custom_profile_field`.
 */
import type { SandboxCore } from "../core.ts";
import { badRequest } from "../http/api-error.ts";
import { emitToUsers } from "../queues/delivery.ts";
import type { ProfileFieldRecord, UserRecord } from "./data.ts";
import { escapeHtml, userById } from "./users.ts";

interface Update {
  field: ProfileFieldRecord;
  value: string | null;
}

function parseUpdates(core: SandboxCore, user: UserRecord, raw: unknown): Update[] {
  if (!Array.isArray(raw)) throw badRequest("data is not a list");
  return raw.map((item, i) => {
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw badRequest(`data[${i}] is not a dict`);
    const o = item as Record<string, unknown>;
    if (!("id" in o)) throw badRequest(`data[${i}]["id"] field is missing: Field required`);
    if (!("value" in o)) throw badRequest(`data[${i}]["value"] field is missing: Field required`);
    if (typeof o.id !== "number" || !Number.isInteger(o.id))
      throw badRequest(`data[${i}]["id"] is not an integer`);
    const field = core.data.profileFields.find((f) => f.id === o.id);
    if (!field) throw badRequest(`Field id ${o.id} not found.`);
    if (user.role > 200 && (!core.data.realm.profile_field_editing_allowed || !field.editable_by_user)) {
      throw badRequest("You are not allowed to change this field. Contact an administrator to update it.");
    }
    return { field, value: checkValue(core, field, o.value) };
  });
}

function checkValue(core: SandboxCore, field: ProfileFieldRecord, value: unknown): string | null {
  if (value === null) return null;
  const name = field.name;
  if (field.type === "user") {
    if (!Array.isArray(value) || !value.every((v) => typeof v === "number" && Number.isInteger(v))) {
      throw badRequest(`${name} is not a list`);
    }
    for (const id of value as number[]) {
      const u = userById(core.data, id);
      if (!u || u.system_bot) throw badRequest(`Invalid user ID: ${id}`);
    }
    return JSON.stringify(value);
  }
  if (typeof value !== "string") throw badRequest(`${name} is not a string`);
  if (value === "") return null;
  if (field.type === "short_text" && [...value].length > 50)
    throw badRequest(`${name} is too long (limit: 50 characters)`);
  if (field.type === "long_text" && [...value].length > 500)
    throw badRequest(`${name} is too long (limit: 500 characters)`);
  if (field.type === "link" && !/^https?:\/\/\S+$/.test(value)) throw badRequest(`${name} is not a URL`);
  if (field.type === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(value)) throw badRequest(`${name} is not a date`);
  if (field.type === "choice") {
    const choices = field.field_data ? (JSON.parse(field.field_data) as Record<string, unknown>) : {};
    if (!(value in choices)) throw badRequest(`'${value}' is not a valid choice for '${name}'.`);
  }
  return value;
}

export function updateProfileData(core: SandboxCore, user: UserRecord, raw: unknown): void {
  const updates = parseUpdates(core, user, raw);
  const everyone = core.data.users.filter((u) => u.is_active).map((u) => u.user_id);
  for (const { field, value } of updates) {
    const key = String(field.id);
    if ((user.profile_data[key] ?? null) === value) continue;
    if (value === null) delete user.profile_data[key];
    else user.profile_data[key] = value;
    const custom: Record<string, unknown> = { id: field.id, value };
    if (value !== null && (field.type === "short_text" || field.type === "long_text")) {
      custom.rendered_value = `<p>${escapeHtml(value)}</p>`;
    }
    emitToUsers(core, everyone, {
      type: "realm_user",
      op: "update",
      person: { user_id: user.user_id, custom_profile_field: custom },
    });
  }
}
