/** Users: lookup by id or email, the own account, the user list, own custom profile data. */
import { z } from "zod";
import { OwnUser, type ProfileDataUpdate, User } from "../../wire/records.ts";
import { path } from "../encode.ts";
import { requireFeature } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "./context.ts";

export interface GetUserParams {
  /** Default true: `avatar_url` may be null for gravatar-hosted avatars. */
  client_gravatar?: boolean;
  include_custom_profile_fields?: boolean;
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
     *
     * @example
     * ```ts
     * const { user } = await client.users.get(12, { include_custom_profile_fields: true });
     * ```
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
      return ctx.request("GET", path`/users/${user}`, { ...params }, { ...options, schema: OneUser });
    },

    /**
     * The authenticated account (GET /users/me). Teaches the client whether it is a bot.
     *
     * @example
     * ```ts
     * const me = await client.users.me();
     * console.log(me.user_id, me.is_bot);
     * ```
     */
    async me(options: CallOptions = {}) {
      const me = await ctx.request("GET", "/users/me", {}, { ...options, schema: OwnUser });
      ctx.state.isBot = me.is_bot;
      return me;
    },

    /** All users of the organization (GET /users). */
    async list(params: GetUserParams = {}, options: CallOptions = {}) {
      return ctx.request("GET", "/users", { ...params }, { ...options, schema: Members });
    },

    /**
     * Set or clear the account's own custom profile fields (PATCH /users/me/profile_data).
     *
     * @example
     * ```ts
     * await client.users.updateProfileData({ data: [{ id: 3, value: "https://example.org" }, { id: 4, value: null }] });
     * ```
     */
    async updateProfileData(
      params: { data: readonly ProfileDataUpdate[] },
      options: CallOptions = {},
    ): Promise<void> {
      await ctx.request("PATCH", "/users/me/profile_data", { ...params }, options);
    },
  };
}

export type UsersApi = ReturnType<typeof usersApi>;
