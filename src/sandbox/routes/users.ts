/**
 * GET /users, /users/me, /users/{user_id}, /users/{email} (email visibility and `user{id}@host`
 * placeholders), and PATCH /users/me/profile_data.
 */
import type { SandboxCore } from "../core.ts";
import { badRequest, missingArgument } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import type { UserRecord } from "../state/data.ts";
import { updateProfileData } from "../state/profile-data.ts";
import { apiEmail, avatarUrl, canSeeEmail, profileDataToApi, userById, userToApi } from "../state/users.ts";

const noSuchUser = () => badRequest("No such user");

function viewOptions(ctx: AuthedContext) {
  return {
    clientGravatar: ctx.params.bool("client_gravatar") ?? true,
    includeCustomProfileFields: ctx.params.bool("include_custom_profile_fields") ?? false,
  };
}

/** Find a user by the email in GET /users/{email}: a visible real email, the API email or a placeholder. */
function userByEmailFor(core: SandboxCore, viewer: UserRecord, email: string): UserRecord | undefined {
  const data = core.data;
  const key = email.toLowerCase();
  const placeholder = new RegExp(`^user(\\d+)@${data.realm.host.replaceAll(".", "\\.")}$`, "i").exec(email);
  if (placeholder) return userById(data, Number(placeholder[1]));
  return data.users.find(
    (u) =>
      apiEmail(data, u).toLowerCase() === key ||
      (u.delivery_email.toLowerCase() === key && canSeeEmail(data, viewer, u)),
  );
}

function ownUser(core: SandboxCore, user: UserRecord): Record<string, unknown> {
  const data = core.data;
  const out: Record<string, unknown> = {
    avatar_url: avatarUrl(data, user, user, false),
    avatar_version: user.avatar_version,
    email: apiEmail(data, user),
    full_name: user.full_name,
    is_admin: user.role <= 200,
    is_owner: user.role === 100,
    is_guest: user.role === 600,
    is_bot: user.is_bot,
    is_active: user.is_active,
    role: user.role,
    timezone: user.timezone,
    date_joined: user.date_joined,
    max_message_id: data.messages.length > 0 ? data.messages[data.messages.length - 1]!.id : -1,
    user_id: user.user_id,
    delivery_email: user.delivery_email,
    is_imported_stub: false,
  };
  if (!user.is_bot) out.profile_data = profileDataToApi(data, user);
  return out;
}

export const userRoutes = [
  route("/users", {
    GET: endpoint((ctx) => {
      const opts = viewOptions(ctx);
      const ids = ctx.params.intList("user_ids");
      const data = ctx.core.data;
      const people = data.users.filter(
        (u) => !u.system_bot && (ids === undefined || ids.includes(u.user_id)),
      );
      return { members: people.map((u) => userToApi(data, ctx.user, u, opts)) };
    }),
  }),
  route("/users/me", { GET: endpoint(({ core, user }) => ownUser(core, user)) }),
  route("/users/me/profile_data", {
    PATCH: endpoint((ctx) => {
      const found = ctx.params.json("data");
      if (!found) throw missingArgument("data");
      updateProfileData(ctx.core, ctx.user, found.value);
      return {};
    }),
  }),
  route("/users/{user_id:int}", {
    GET: endpoint((ctx) => {
      const opts = viewOptions(ctx);
      const target = userById(ctx.core.data, Number(ctx.path.user_id));
      if (!target) throw noSuchUser();
      return { user: userToApi(ctx.core.data, ctx.user, target, opts) };
    }),
  }),
  route("/users/{email}", {
    GET: endpoint((ctx) => {
      const opts = viewOptions(ctx);
      const target = userByEmailFor(ctx.core, ctx.user, decodeURIComponent(ctx.path.email!));
      if (!target) throw noSuchUser();
      return { user: userToApi(ctx.core.data, ctx.user, target, opts) };
    }),
  }),
];
