/** Users: lookup, the own account, own profile data and legacy push tokens; user-group membership. */
import { z } from "zod";
import { OwnUser, type ProfileDataUpdate, User, UserGroup } from "../../wire/records.ts";
import { path } from "../encode.ts";
import { ApiError, GroupPermissionError } from "../errors.ts";
import { requireFeature, type ServerState } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "../transport.ts";

export interface GetUserParams {
  /** Default true: `avatar_url` may be null for gravatar-hosted avatars. */
  client_gravatar?: boolean;
  include_custom_profile_fields?: boolean;
}

export interface UpdateMembersParams {
  add?: readonly number[];
  delete?: readonly number[];
  /** Feature level 311. */
  add_subgroups?: readonly number[];
  /** Feature level 311. */
  delete_subgroups?: readonly number[];
}

const OneUser = z.looseObject({ user: User });
const Groups = z.looseObject({ user_groups: z.array(UserGroup) });
const Members = z.looseObject({ members: z.array(User) });

// The API-only placeholder address `user{id}@{realm_host}` works for every user (since FL 39).
const placeholderEmail = /^user\d+@/;

export function usersApi(ctx: ResourceContext) {
  return {
    /**
     * One user by id (GET /users/{user_id}) or by email (GET /users/{email}; the real email only if
     * its visibility allows, or the placeholder `user{id}@{realm_host}`).
     */
    async get(user: number | string, params: GetUserParams = {}, options: CallOptions = {}) {
      if (typeof user === "string") {
        const placeholder = placeholderEmail.test(user);
        requireFeature(
          ctx.state,
          placeholder ? "usersByEmail" : "usersByRealEmail",
          `Looking up a user by ${placeholder ? "placeholder" : "real"} email (GET /users/{email})`,
        );
      }
      return ctx.call("GET", path`/users/${user}`, params, options, OneUser);
    },

    /** The authenticated account (GET /users/me). Teaches the client whether it is a bot. */
    async me(options: CallOptions = {}) {
      const me = await ctx.call("GET", "/users/me", {}, options, OwnUser);
      ctx.state.isBot = me.is_bot;
      return me;
    },

    /** All users of the organization (GET /users). */
    list: (params: GetUserParams = {}, options: CallOptions = {}) =>
      ctx.call("GET", "/users", params, options, Members),

    /** Set or clear the account's own custom profile fields (PATCH /users/me/profile_data). */
    updateProfileData: (params: { data: readonly ProfileDataUpdate[] }, options: CallOptions = {}) =>
      ctx.call("PATCH", "/users/me/profile_data", params, options),
  };
}

export type UsersApi = ReturnType<typeof usersApi>;

/** Removing legacy push registrations (deprecated since feature level 406, still served). */
export function pushTokensApi(ctx: ResourceContext) {
  return {
    /** Remove an Android push registration token (DELETE /users/me/android_gcm_reg_id). */
    removeAndroid: (params: { token: string }, options: CallOptions = {}) =>
      ctx.call("DELETE", "/users/me/android_gcm_reg_id", params, options),

    /** Remove an Apple push device token (DELETE /users/me/apns_device_token). */
    removeApns: (params: { token: string }, options: CallOptions = {}) =>
      ctx.call("DELETE", "/users/me/apns_device_token", params, options),
  };
}

function requireBotAccess(state: ServerState, what: string): void {
  if (state.isBot === true) requireFeature(state, "userGroupBotsAllowed", `${what} by a bot`);
}

/** The server's words for a refused group change (`BAD_REQUEST`, like the group's other refusals). */
const INSUFFICIENT = "Insufficient permission";

/** User groups: listing, and membership (bots may change members only from feature level 496). */
export function userGroupsApi(ctx: ResourceContext) {
  return {
    /**
     * Every user group of the organization, system groups (`role:…`) included (GET /user_groups).
     * `members` are direct members; `direct_subgroup_ids` name the subgroups.
     */
    list: (params: { include_deactivated_groups?: boolean } = {}, options: CallOptions = {}) =>
      ctx.call("GET", "/user_groups", params, options, Groups),

    /**
     * Add or remove members and subgroups (POST /user_groups/{id}/members). Refused for want of
     * permission, it throws {@link GroupPermissionError}, which says what an administrator can change.
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
      try {
        return await ctx.call("POST", path`/user_groups/${user_group_id}/members`, params, options);
      } catch (err) {
        if (err instanceof ApiError && err.status === 400 && err.msg === INSUFFICIENT) {
          const adds = (params.add?.length ?? 0) > 0;
          const removes = (params.delete?.length ?? 0) > 0;
          const change = adds && removes ? "both" : removes ? "remove" : "add";
          const { status, code, msg, endpoint, data } = err;
          throw new GroupPermissionError({
            status,
            code,
            msg,
            endpoint,
            data,
            groupId: user_group_id,
            change,
          });
        }
        throw err;
      }
    },

    /** Add or remove subgroups (POST /user_groups/{id}/subgroups, feature level 127). */
    async updateSubgroups(
      user_group_id: number,
      params: { add?: readonly number[]; delete?: readonly number[] },
      options: CallOptions = {},
    ): Promise<void> {
      const what = "Updating user-group subgroups (POST /user_groups/{user_group_id}/subgroups)";
      requireFeature(ctx.state, "userGroupSubgroupsEndpoint", what);
      requireBotAccess(ctx.state, what);
      return ctx.call("POST", path`/user_groups/${user_group_id}/subgroups`, params, options);
    },
  };
}
