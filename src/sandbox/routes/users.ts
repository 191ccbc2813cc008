/**
 * GET /users, /users/me, /users/{user_id}, /users/{email} (email visibility and `user{id}@host`
 * placeholders), PATCH /users/me/profile_data, the legacy push token endpoints, and saved
 * snippets (see docs/internals/server-behaviour.md#saved-snippets: an edit that changes nothing is
 * a 200 without event).
 */
import type { SandboxCore } from "../core.ts";
import { badRequest, missingArgument, notFound } from "../http/api-error.ts";
import type { Params } from "../http/params.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToAll, emitToUsers } from "../queues/emit.ts";
import { nextId, type ProfileFieldRecord, type SnippetRecord, type UserRecord } from "../state/data.ts";
import { escapeHtml } from "../state/escape-html.ts";
import { apiEmail, canSeeEmail, userById, userToApi } from "../state/users.ts";

function viewOptions(ctx: AuthedContext) {
  return {
    clientGravatar: ctx.params.bool("client_gravatar") ?? true,
    includeCustomProfileFields: ctx.params.bool("include_custom_profile_fields") ?? false,
  };
}

/** GET /users/{user_id} and /users/{email}: the view options are read before the lookup. */
function oneUser(ctx: AuthedContext, find: () => UserRecord | undefined) {
  const opts = viewOptions(ctx);
  const target = find();
  if (!target) throw badRequest("No such user");
  return { user: userToApi(ctx.core.data, ctx.user, target, opts) };
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

/** GET /users/me: the own User record plus `max_message_id`; bots lack `bot_type` and `bot_owner_id` here. */
function ownUser(core: SandboxCore, user: UserRecord): Record<string, unknown> {
  const data = core.data;
  const { bot_type, bot_owner_id, ...out } = userToApi(data, user, user, {
    clientGravatar: false,
    includeCustomProfileFields: true,
  });
  return { ...out, max_message_id: data.messages.at(-1)?.id ?? -1 };
}

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
  const limit = field.type === "short_text" ? 50 : field.type === "long_text" ? 500 : Infinity;
  if ([...value].length > limit) throw badRequest(`${name} is too long (limit: ${limit} characters)`);
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
  for (const { field, value } of updates) {
    const key = String(field.id);
    if ((user.profile_data[key] ?? null) === value) continue;
    if (value === null) delete user.profile_data[key];
    else user.profile_data[key] = value;
    const custom: Record<string, unknown> = { id: field.id, value };
    if (value !== null && (field.type === "short_text" || field.type === "long_text")) {
      custom.rendered_value = `<p>${escapeHtml(value)}</p>`;
    }
    emitToAll(core, {
      type: "realm_user",
      op: "update",
      person: { user_id: user.user_id, custom_profile_field: custom },
    });
  }
}

type Kind = "android" | "apns";

function token(ctx: AuthedContext, kind: Kind): string {
  const value = ctx.params.requiredStr("token");
  if (value === "" || value.length > 4096) throw badRequest("Empty or invalid length token");
  if (kind === "apns" && !/^[0-9a-fA-F]+$/.test(value) && !/^[A-Za-z0-9+/]+=*$/.test(value)) {
    throw badRequest("Invalid APNS token");
  }
  return value;
}

/** Push-token views refuse bots, whatever the parameters (see docs/internals/server-behaviour.md#requests-and-authentication). */
const HUMANS_ONLY = { humanUsersOnly: true };

function tokenRoutes(path: string, kind: Kind) {
  return route(path, {
    POST: endpoint((ctx) => {
      const value = token(ctx, kind);
      ctx.params.str("appid");
      const user = ctx.user;
      if (!user.push_tokens.some((t) => t.kind === kind && t.token === value))
        user.push_tokens.push({ kind, token: value });
      return {};
    }, HUMANS_ONLY),
    DELETE: endpoint((ctx) => {
      const value = token(ctx, kind);
      const user = ctx.user;
      const before = user.push_tokens.length;
      user.push_tokens = user.push_tokens.filter((t) => !(t.kind === kind && t.token === value));
      if (user.push_tokens.length === before) throw badRequest("Token does not exist");
      return {};
    }, HUMANS_ONLY),
  });
}

const MAX_TITLE = 60;
const MAX_CONTENT = 10000;

const view = ({ id, title, content, date_created }: SnippetRecord) => ({ id, title, content, date_created });

function text(params: Params, name: string, max: number, required: boolean): string | undefined {
  const raw = required ? params.requiredStr(name) : params.str(name);
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value === "") throw badRequest(`${name} cannot be blank`);
  if ([...value].length > max) throw badRequest(`${name} is too long (limit: ${max} characters)`);
  return value;
}

function access(ctx: AuthedContext): SnippetRecord {
  const id = Number(ctx.path.saved_snippet_id);
  const snippet = ctx.core.data.snippets.find((s) => s.id === id && s.user_id === ctx.user.user_id);
  if (!snippet) throw notFound("Saved snippet does not exist.");
  return snippet;
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
    GET: endpoint((ctx) => oneUser(ctx, () => userById(ctx.core.data, Number(ctx.path.user_id)))),
  }),
  route("/users/{email}", {
    GET: endpoint((ctx) =>
      oneUser(ctx, () => userByEmailFor(ctx.core, ctx.user, decodeURIComponent(ctx.path.email!))),
    ),
  }),
  tokenRoutes("/users/me/android_gcm_reg_id", "android"),
  tokenRoutes("/users/me/apns_device_token", "apns"),
  route("/saved_snippets", {
    GET: endpoint(
      ({ core, user }) => ({
        saved_snippets: core.data.snippets.filter((s) => s.user_id === user.user_id).map(view),
      }),
      { typed: false },
    ),
    POST: endpoint(({ core, user, params }) => {
      const title = text(params, "title", MAX_TITLE, true)!;
      const content = text(params, "content", MAX_CONTENT, true)!;
      const snippet = {
        id: nextId(core.data, "snippet"),
        user_id: user.user_id,
        title,
        content,
        date_created: core.clock.seconds(),
      };
      core.data.snippets.push(snippet);
      emitToUsers(core, [user.user_id], { type: "saved_snippets", op: "add", saved_snippet: view(snippet) });
      return { saved_snippet_id: snippet.id };
    }),
  }),
  route("/saved_snippets/{saved_snippet_id:int}", {
    PATCH: endpoint((ctx) => {
      const title = text(ctx.params, "title", MAX_TITLE, false);
      const content = text(ctx.params, "content", MAX_CONTENT, false);
      if (title === undefined && content === undefined) return {};
      const snippet = access(ctx);
      if (title !== undefined) snippet.title = title;
      if (content !== undefined) snippet.content = content;
      emitToUsers(ctx.core, [ctx.user.user_id], {
        type: "saved_snippets",
        op: "update",
        saved_snippet: view(snippet),
      });
      return {};
    }),
    DELETE: endpoint((ctx) => {
      const snippet = access(ctx);
      ctx.core.data.snippets = ctx.core.data.snippets.filter((s) => s !== snippet);
      emitToUsers(ctx.core, [ctx.user.user_id], {
        type: "saved_snippets",
        op: "remove",
        saved_snippet_id: snippet.id,
      });
      return {};
    }),
  }),
];
