/** User groups: list, members and subgroups (bots rejected before FL 496). */
import type { SandboxCore } from "../core.ts";
import { badRequest } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToAll } from "../queues/emit.ts";
import type { GroupSettingRecord, UserGroupRecord } from "../state/data.ts";
import { activeMembers, groupMemberIds, userById, userGroupView } from "../state/users.ts";

const BOTS_ALLOWED_FL = 496;

function groupOf(ctx: AuthedContext): UserGroupRecord {
  const group = ctx.core.data.userGroups.find((g) => g.id === Number(ctx.path.user_group_id));
  if (!group) throw badRequest("Invalid user group");
  return group;
}

/** Group permissions by setting, the server's way from feature level 305 (before: members and moderators). */
const SETTINGS_FL = 305;

type Setting = "can_manage_group" | "can_add_members_group" | "can_remove_members_group";

/**
 * The group `ctx` names, if its user may change it through `setting`: members of the realm's
 * `can_manage_all_groups`, of the group's `can_manage_group`, or of `setting`. A guest may only
 * leave. Refused as the server refuses: 400 "Insufficient permission".
 */
function groupForUpdate(ctx: AuthedContext, setting: Setting, self = false): UserGroupRecord {
  const { core, user } = ctx;
  const data = core.data;
  if (user.is_bot && data.realm.feature_level < BOTS_ALLOWED_FL) {
    throw badRequest("This endpoint does not accept bot requests.");
  }
  const group = groupOf(ctx);
  if (group.is_system_group) throw badRequest("Insufficient permission");
  if (data.realm.feature_level < SETTINGS_FL) {
    if (user.role > 300 && !group.members.includes(user.user_id)) throw badRequest("Insufficient permission");
    return group;
  }
  if (self && setting === "can_remove_members_group") return group; // can_leave_group: everyone
  if (user.role === 600) throw badRequest("Insufficient permission");
  const manageAll = data.userGroups.find(
    (g) => g.is_system_group && g.name === (data.realm.can_manage_all_groups ?? "role:administrators"),
  );
  const allowed =
    (manageAll !== undefined && groupMemberIds(data, manageAll.id).has(user.user_id)) ||
    inSetting(core, group.can_manage_group, user.user_id) ||
    (setting !== "can_manage_group" && inSetting(core, group[setting], user.user_id));
  if (!allowed) throw badRequest("Insufficient permission");
  return group;
}

function inSetting(core: SandboxCore, value: GroupSettingRecord | undefined, userId: number): boolean {
  if (value === undefined) return false;
  if (typeof value === "number") return groupMemberIds(core.data, value).has(userId);
  return (
    value.direct_members.includes(userId) ||
    value.direct_subgroups.some((g) => groupMemberIds(core.data, g).has(userId))
  );
}

function emitGroup(core: SandboxCore, event: Record<string, unknown>): void {
  emitToAll(core, { type: "user_group", ...event });
}

function changeMembers(ctx: AuthedContext, group: UserGroupRecord, add: number[], remove: number[]): void {
  const data = ctx.core.data;
  for (const id of [...add, ...remove]) {
    const u = userById(data, id);
    if (!u || u.system_bot || !u.is_active) throw badRequest(`Invalid user ID: ${id}`);
  }
  for (const id of add)
    if (group.members.includes(id)) throw badRequest(`User ${id} is already a member of this group`);
  for (const id of remove)
    if (!group.members.includes(id)) throw badRequest(`There is no member '${id}' in this user group`);
  if (add.length > 0) {
    group.members = [...group.members, ...add];
    emitGroup(ctx.core, { op: "add_members", group_id: group.id, user_ids: add });
  }
  if (remove.length > 0) {
    group.members = group.members.filter((m) => !remove.includes(m));
    emitGroup(ctx.core, { op: "remove_members", group_id: group.id, user_ids: remove });
  }
}

function changeSubgroups(ctx: AuthedContext, group: UserGroupRecord, add: number[], remove: number[]): void {
  const data = ctx.core.data;
  for (const id of [...add, ...remove]) {
    if (!data.userGroups.some((g) => g.id === id)) throw badRequest(`Invalid user group ID: ${id}`);
  }
  for (const id of add) {
    // The server words a cycle (or the group itself) like an existing subgroup.
    if (group.subgroups.includes(id) || id === group.id || groupContains(ctx.core, id, group.id)) {
      throw badRequest(`User group ${id} is already a subgroup of this group.`);
    }
  }
  for (const id of remove)
    if (!group.subgroups.includes(id)) throw badRequest(`User group ${id} is not a subgroup of this group.`);
  if (add.length > 0) {
    group.subgroups = [...group.subgroups, ...add];
    emitGroup(ctx.core, { op: "add_subgroups", group_id: group.id, direct_subgroup_ids: add });
  }
  if (remove.length > 0) {
    group.subgroups = group.subgroups.filter((s) => !remove.includes(s));
    emitGroup(ctx.core, { op: "remove_subgroups", group_id: group.id, direct_subgroup_ids: remove });
  }
}

/** Would making `child` a subgroup create a cycle (does `child` already contain `parent`)? */
function groupContains(core: SandboxCore, child: number, parent: number, seen = new Set<number>()): boolean {
  if (seen.has(child)) return false;
  seen.add(child);
  const g = core.data.userGroups.find((x) => x.id === child);
  return !!g && g.subgroups.some((s) => s === parent || groupContains(core, s, parent, seen));
}

export const userGroupRoutes = [
  route("/user_groups", {
    GET: endpoint(({ core }) => ({
      user_groups: core.data.userGroups.map((g) => userGroupView(core.data, g)),
    })),
  }),
  route("/user_groups/{user_group_id:int}/members", {
    GET: endpoint((ctx) => {
      const direct = ctx.params.bool("direct_member_only") ?? false;
      const group = groupOf(ctx);
      const members = direct ? group.members : groupMemberIds(ctx.core.data, group.id);
      return { members: activeMembers(ctx.core.data, members) };
    }),
    POST: endpoint((ctx) => {
      const add = ctx.params.intList("add") ?? [];
      const remove = ctx.params.intList("delete") ?? [];
      const addSub = ctx.params.intList("add_subgroups") ?? [];
      const removeSub = ctx.params.intList("delete_subgroups") ?? [];
      const self = (ids: number[]) => ids.length === 1 && ids[0] === ctx.user.user_id;
      // Each change is checked against its own setting, as the server does, before any is made.
      const group = groupOf(ctx);
      if (add.length > 0) groupForUpdate(ctx, "can_add_members_group", self(add));
      if (remove.length > 0) groupForUpdate(ctx, "can_remove_members_group", self(remove));
      if (addSub.length > 0 || removeSub.length > 0 || add.length + remove.length === 0)
        groupForUpdate(ctx, "can_manage_group");
      changeMembers(ctx, group, add, remove);
      changeSubgroups(ctx, group, addSub, removeSub);
      return {};
    }),
  }),
  route("/user_groups/{user_group_id:int}/subgroups", {
    GET: endpoint((ctx) => ({ subgroups: groupOf(ctx).subgroups })),
    POST: endpoint((ctx) => {
      const add = ctx.params.intList("add") ?? [];
      const remove = ctx.params.intList("delete") ?? [];
      const group = groupForUpdate(ctx, "can_manage_group");
      changeSubgroups(ctx, group, add, remove);
      return {};
    }),
  }),
];
