/** Users: lookup, the own account, own profile data and legacy push tokens; user-group membership. */
import { z } from "zod";
import { OwnUser, type ProfileDataUpdate, User } from "../../wire/records.ts";
import { path } from "../encode.ts";
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

/** User-group membership. Bots may call these only from feature level 496. */
export function userGroupsApi(ctx: ResourceContext) {
  return {
    /** Add or remove members and subgroups (POST /user_groups/{id}/members). */
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
      return ctx.call("POST", path`/user_groups/${user_group_id}/members`, params, options);
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
