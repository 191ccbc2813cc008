/** A user group as the server shows it, in GET /user_groups and in the register state alike. */
import type { SandboxData, UserGroupRecord } from "./data.ts";

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
