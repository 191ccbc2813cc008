/** User-group membership. Bots may call these only from feature level 496. */
import { path } from "../encode.ts";
import { requireFeature, type ServerState } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "./context.ts";

export interface UpdateMembersParams {
  add?: readonly number[];
  delete?: readonly number[];
  /** Feature level 311. */
  add_subgroups?: readonly number[];
  /** Feature level 311. */
  delete_subgroups?: readonly number[];
}

function requireBotAccess(state: ServerState, what: string): void {
  if (state.isBot === true) requireFeature(state, "userGroupBotsAllowed", `${what} by a bot`);
}

export function userGroupsApi(ctx: ResourceContext) {
  return {
    /**
     * Add or remove members and subgroups (POST /user_groups/{id}/members).
     *
     * @example
     * ```ts
     * await client.userGroups.updateMembers(7, { add: [12, 13], delete: [9] });
     * ```
     */
    async updateMembers(
      user_group_id: number,
      params: UpdateMembersParams,
      options: CallOptions = {},
    ): Promise<void> {
      const what = "Updating user-group members (POST /user_groups/{user_group_id}/members)";
      requireBotAccess(ctx.state, what);
      if (params.add_subgroups !== undefined || params.delete_subgroups !== undefined) {
        requireFeature(
          ctx.state,
          "userGroupMembersSubgroupParams",
          `${what} with add_subgroups/delete_subgroups`,
        );
      }
      await ctx.request("POST", path`/user_groups/${user_group_id}/members`, { ...params }, options);
    },

    /**
     * Add or remove subgroups (POST /user_groups/{id}/subgroups, feature level 127).
     *
     * @example
     * ```ts
     * await client.userGroups.updateSubgroups(7, { add: [8] });
     * ```
     */
    async updateSubgroups(
      user_group_id: number,
      params: { add?: readonly number[]; delete?: readonly number[] },
      options: CallOptions = {},
    ): Promise<void> {
      const what = "Updating user-group subgroups (POST /user_groups/{user_group_id}/subgroups)";
      requireFeature(ctx.state, "userGroupSubgroupsEndpoint", what);
      requireBotAccess(ctx.state, what);
      await ctx.request("POST", path`/user_groups/${user_group_id}/subgroups`, { ...params }, options);
    },
  };
}

export type UserGroupsApi = ReturnType<typeof userGroupsApi>;
