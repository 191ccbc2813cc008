/** User groups: list, members and subgroups (bots rejected before FL 496). */
import type { SandboxCore } from "../core.ts";
import { badRequest } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToAll } from "../queues/emit.ts";
import type { UserGroupRecord } from "../state/data.ts";
import { activeMembers, groupMemberIds, inGroupSetting, userById, userGroupView } from "../state/users.ts";

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
    inGroupSetting(core.data, group.can_manage_group, user.user_id) ||
    (setting !== "can_manage_group" && inGroupSetting(core.data, group[setting], user.user_id));
  if (!allowed) throw badRequest("Insufficient permission");
  return group;
}

function emitGroup(core: SandboxCore, event: Record<string, unknown>): void {
  emitToAll(core, { type: "user_group", ...event });
}

/** The server's refusal of a membership request that names no change (subgroup parameters from FL 311). */
const SUBGROUP_PARAMS_FL = 311;

function nothingToDo(ctx: AuthedContext, names: "members" | "subgroups"): never {
  if (names === "members" && ctx.core.data.realm.feature_level >= SUBGROUP_PARAMS_FL) {
    throw badRequest(
      'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
    );
  }
  throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
}

/** One change of a membership request: checks its own permission and ids, then applies itself. */
type Step = (ctx: AuthedContext, ids: number[], events: Record<string, unknown>[]) => void;

/**
 * Run `steps` in turn, as the server runs its parts of one request in one transaction: each
 * step's checks see the steps before it applied, and a refusal anywhere leaves the group as it was.
 */
function inOneGo(ctx: AuthedContext, steps: [Step, number[]][]): void {
  // Not looked up here: a step names an unknown group in its own turn ("Invalid user group").
  const group = ctx.core.data.userGroups.find((g) => g.id === Number(ctx.path.user_group_id));
  const before = group && { members: group.members, subgroups: group.subgroups };
  const events: Record<string, unknown>[] = [];
  try {
    for (const [step, ids] of steps) if (ids.length > 0) step(ctx, ids, events);
  } catch (err) {
    if (group && before) Object.assign(group, before);
    throw err;
  }
  for (const event of events) emitGroup(ctx.core, event);
}

function checkUsers(ctx: AuthedContext, ids: number[]): void {
  for (const id of ids) {
    const u = userById(ctx.core.data, id);
    if (!u || u.system_bot || !u.is_active) throw badRequest(`Invalid user ID: ${id}`);
  }
}

const isSelf = (ctx: AuthedContext, ids: number[]) => ids.length === 1 && ids[0] === ctx.user.user_id;

const addMembers: Step = (ctx, ids, events) => {
  const group = groupForUpdate(ctx, "can_add_members_group");
  checkUsers(ctx, ids);
  for (const id of ids)
    if (group.members.includes(id)) throw badRequest(`User ${id} is already a member of this group`);
  group.members = [...group.members, ...ids];
  events.push({ op: "add_members", group_id: group.id, user_ids: ids });
};

/** The server reads the users before the group here, so a bad id is named before a refusal. */
const removeMembers: Step = (ctx, ids, events) => {
  checkUsers(ctx, ids);
  const group = groupForUpdate(ctx, "can_remove_members_group", isSelf(ctx, ids));
  for (const id of ids)
    if (!group.members.includes(id)) throw badRequest(`There is no member '${id}' in this user group`);
  group.members = group.members.filter((m) => !ids.includes(m));
  events.push({ op: "remove_members", group_id: group.id, user_ids: ids });
};

function checkGroupIds(ctx: AuthedContext, ids: number[]): void {
  const missing = ids.find((id) => !ctx.core.data.userGroups.some((g) => g.id === id));
  if (missing !== undefined) throw badRequest(`Invalid user group ID: ${missing}`);
}

/** Adding subgroups takes `can_add_members_group` from FL 305, as adding members does. */
const addSubgroups: Step = (ctx, ids, events) => {
  const setting =
    ctx.core.data.realm.feature_level >= SETTINGS_FL ? "can_add_members_group" : "can_manage_group";
  const group = groupForUpdate(ctx, setting);
  checkGroupIds(ctx, ids);
  for (const id of ids)
    if (group.subgroups.includes(id))
      throw badRequest(`User group ${id} is already a subgroup of this group.`);
  // The group itself among `ids`, or within one of them, would make a cycle.
  if (ids.some((id) => id === group.id || subgroupIds(ctx.core, id).has(group.id))) {
    throw badRequest(`User group ${group.id} is already a subgroup of one of the passed subgroups.`);
  }
  group.subgroups = [...group.subgroups, ...ids];
  events.push({ op: "add_subgroups", group_id: group.id, direct_subgroup_ids: ids });
};

const removeSubgroups: Step = (ctx, ids, events) => {
  const group = groupForUpdate(ctx, "can_manage_group");
  checkGroupIds(ctx, ids);
  for (const id of ids)
    if (!group.subgroups.includes(id)) throw badRequest(`User group ${id} is not a subgroup of this group.`);
  group.subgroups = group.subgroups.filter((s) => !ids.includes(s));
  events.push({ op: "remove_subgroups", group_id: group.id, direct_subgroup_ids: ids });
};

/** Every group within `id`'s subgroups, at any depth (`id` itself left out), nearest first. */
function subgroupIds(core: SandboxCore, id: number): Set<number> {
  const out = new Set<number>();
  const queue = [id];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const s of core.data.userGroups.find((g) => g.id === next)?.subgroups ?? []) {
      if (s !== id && !out.has(s)) {
        out.add(s);
        queue.push(s);
      }
    }
  }
  return out;
}

/** Bots are refused before any parameter is read (before FL 496), as the server's decorator does. */
function refuseBotsBeforeFL(ctx: AuthedContext): void {
  if (ctx.user.is_bot && ctx.core.data.realm.feature_level < BOTS_ALLOWED_FL) {
    throw badRequest("This endpoint does not accept bot requests.");
  }
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
      refuseBotsBeforeFL(ctx);
      // Read in the order the server's view declares them, so the first bad one is the one named.
      const add = ctx.params.intList("add") ?? [];
      const addSub = ctx.params.intList("add_subgroups") ?? [];
      const remove = ctx.params.intList("delete") ?? [];
      const removeSub = ctx.params.intList("delete_subgroups") ?? [];
      if (add.length + addSub.length + remove.length + removeSub.length === 0) nothingToDo(ctx, "members");
      inOneGo(ctx, [
        [addMembers, add],
        [removeMembers, remove],
        [addSubgroups, addSub],
        [removeSubgroups, removeSub],
      ]);
      return {};
    }),
  }),
  route("/user_groups/{user_group_id:int}/subgroups", {
    GET: endpoint((ctx) => {
      const direct = ctx.params.bool("direct_subgroup_only") ?? false;
      const group = groupOf(ctx);
      return { subgroups: direct ? group.subgroups : [...subgroupIds(ctx.core, group.id)] };
    }),
    POST: endpoint((ctx) => {
      refuseBotsBeforeFL(ctx);
      const add = ctx.params.intList("add") ?? [];
      const remove = ctx.params.intList("delete") ?? [];
      if (add.length + remove.length === 0) nothingToDo(ctx, "subgroups");
      inOneGo(ctx, [
        [addSubgroups, add],
        [removeSubgroups, remove],
      ]);
      return {};
    }),
  }),
];
