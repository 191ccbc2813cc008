/**
 * Account changes made through the control API (or endpoints) and their `realm_user` /
 * `realm_bot` events, sent to every active user as the server does for visible users.
 */
import type { SandboxCore } from "../core.ts";
import { addUser, refreshSystemGroups } from "../org/build-state.ts";
import { emitToUsers } from "../queues/delivery.ts";
import type { RoleValue, UserRecord } from "./data.ts";
import { userToApi } from "./users.ts";

function activeIds(core: SandboxCore): number[] {
  return core.data.users.filter((u) => u.is_active && !u.system_bot).map((u) => u.user_id);
}

/** Emit a realm_user event whose `person` is shaped per receiving user. */
export function emitRealmUser(
  core: SandboxCore,
  op: "add" | "update",
  user: UserRecord,
  fields?: Record<string, unknown>,
): void {
  const data = core.data;
  for (const viewerId of activeIds(core)) {
    const viewer = data.users.find((u) => u.user_id === viewerId)!;
    const person =
      op === "add"
        ? {
            ...userToApi(data, viewer, user, { clientGravatar: false, includeCustomProfileFields: true }),
            profile_data: {},
          }
        : { user_id: user.user_id, ...fields };
    emitToUsers(core, [viewerId], { type: "realm_user", op, person });
  }
}

export interface CreateUserInput {
  email: string;
  full_name: string;
  role: RoleValue;
  botType: 1 | 2 | 3 | 4 | null;
  ownerId: number | null;
  apiKey?: string | undefined;
  settings?: Record<string, boolean | number | string> | undefined;
  /** ISO 8601; default the sandbox clock's now. */
  dateJoined?: string | undefined;
}

export function createUser(core: SandboxCore, input: CreateUserInput): UserRecord {
  const data = core.data;
  const user = addUser(data, {
    delivery_email: input.email,
    full_name: input.full_name,
    role: input.role,
    is_bot: input.botType !== null,
    bot_type: input.botType,
    bot_owner_id: input.ownerId,
    api_key: input.apiKey,
    date_joined: input.dateJoined ?? new Date(core.clock.now()).toISOString(),
    settings: { ...data.realm.user_settings_defaults, ...input.settings },
  });
  refreshSystemGroups(data);
  emitRealmUser(core, "add", user);
  if (user.is_bot) {
    const watchers = data.users
      .filter((u) => u.role <= 200 || u.user_id === input.ownerId)
      .map((u) => u.user_id);
    emitToUsers(core, watchers, {
      type: "realm_bot",
      op: "add",
      bot: {
        user_id: user.user_id,
        full_name: user.full_name,
        email: user.delivery_email,
        bot_type: user.bot_type,
        is_active: true,
        owner_id: user.bot_owner_id,
        default_all_public_streams: false,
        default_sending_stream: null,
        default_events_register_stream: null,
        services: [],
      },
    });
  }
  return user;
}

/** Change a user's role and/or full name, with one realm_user update event per change (NOTES §4.8). */
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
