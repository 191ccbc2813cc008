/**
 * Organization settings: code playgrounds, allowed email domains (owners only from FL 143),
 * PATCH /realm/user_settings_defaults (administrators; enumerated values validated), and
 * channel folders.
 */
import { badRequest, missingArgument, mustBe } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToAll } from "../queues/emit.ts";
import { nextId, type UserRecord } from "../state/data.ts";
import { renderDescription } from "../state/markdown.ts";
import { BOOLEAN_SETTINGS, VALUED_SETTINGS } from "../state/user-settings.ts";

const OWNERS_ONLY_DOMAINS_FL = 143;
const DOMAIN =
  /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

export function requireAdmin(user: UserRecord): void {
  if (user.role > 200) throw mustBe("administrator");
}

function addPlayground(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  requireAdmin(user);
  const name = params.requiredStr("name").trim();
  const language = params.requiredStr("pygments_language").trim();
  const template = params.requiredStr("url_template").trim();
  if (name === "") throw badRequest("name cannot be blank");
  if (language === "" || !/^[\w+#. -]+$/.test(language))
    throw badRequest("Invalid characters in pygments language");
  const variables = [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
  if (!/^https?:\/\//.test(template) || variables.length === 0) throw badRequest("Invalid URL template.");
  if (variables.length !== 1 || variables[0] !== "code") {
    throw badRequest('"code" should be the only variable present in the URL template');
  }
  const playground = {
    id: nextId(core.data, "playground"),
    name,
    pygments_language: language,
    url_template: template,
  };
  core.data.playgrounds.push(playground);
  emitToAll(core, {
    type: "realm_playgrounds",
    realm_playgrounds: core.data.playgrounds.map((p) => ({ ...p })),
  });
  return { id: playground.id };
}

function addDomain(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  if (core.data.realm.feature_level >= OWNERS_ONLY_DOMAINS_FL) {
    if (user.role !== 100) throw mustBe("owner");
  } else requireAdmin(user);
  const domain = params.requiredStr("domain").trim().toLowerCase();
  const allowSubdomains = params.bool("allow_subdomains");
  if (allowSubdomains === undefined) throw missingArgument("allow_subdomains");
  if (!DOMAIN.test(domain)) {
    throw badRequest(`Invalid domain: ${domain === "" ? "Domain can't be empty." : "Domain is invalid."}`);
  }
  if (core.data.domains.some((d) => d.domain === domain)) {
    throw badRequest(`The domain ${domain} is already a part of your organization.`);
  }
  const record = { id: nextId(core.data, "domain"), domain, allow_subdomains: allowSubdomains };
  core.data.domains.push(record);
  emitToAll(core, {
    type: "realm_domains",
    op: "add",
    realm_domain: { domain, allow_subdomains: allowSubdomains },
  });
  return { new_domain: [record.id, record.domain] };
}

function updateDefaults(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  requireAdmin(user);
  const changes: [string, boolean | number | string][] = [];
  for (const name of Object.keys(BOOLEAN_SETTINGS)) {
    const v = params.bool(name);
    if (v !== undefined) changes.push([name, v]);
  }
  for (const [name, [fallback, allowed]] of Object.entries(VALUED_SETTINGS)) {
    const v = typeof fallback === "number" ? params.int(name) : params.str(name);
    if (v === undefined) continue;
    const ok =
      allowed === null ||
      (typeof allowed === "number"
        ? (v as number) >= 1 && (v as number) <= allowed
        : allowed.includes(v as string));
    if (!ok) throw badRequest(`Invalid ${name}`);
    changes.push([name, v]);
  }
  const defaults = core.data.realm.user_settings_defaults;
  for (const [name, value] of changes) {
    if (defaults[name] === value) continue;
    defaults[name] = value;
    emitToAll(core, {
      type: "realm_user_settings_defaults",
      op: "update",
      property: name,
      value,
    });
  }
  return {};
}

const MAX_NAME = 60;
const MAX_DESCRIPTION = 1024;

export const realmRoutes = [
  route("/realm/playgrounds", { POST: endpoint(addPlayground) }),
  route("/realm/playgrounds/{playground_id:int}", {
    DELETE: endpoint(({ core, user, path }) => {
      requireAdmin(user);
      const id = Number(path.playground_id);
      if (!core.data.playgrounds.some((p) => p.id === id)) throw badRequest("Invalid playground");
      core.data.playgrounds = core.data.playgrounds.filter((p) => p.id !== id);
      emitToAll(core, {
        type: "realm_playgrounds",
        realm_playgrounds: core.data.playgrounds.map((p) => ({ ...p })),
      });
      return {};
    }),
  }),
  route("/realm/domains", {
    GET: endpoint(({ core }) => ({
      domains: core.data.domains.map(({ domain, allow_subdomains }) => ({ domain, allow_subdomains })),
    })),
    POST: endpoint(addDomain),
  }),
  route("/realm/user_settings_defaults", { PATCH: endpoint(updateDefaults) }),
  route("/channel_folders/create", {
    POST: endpoint(({ core, user, params }) => {
      requireAdmin(user);
      const name = params.requiredStr("name").trim();
      const description = params.requiredStr("description").trim();
      if (name === "") throw badRequest("Channel folder name can't be empty.");
      if ([...name].length > MAX_NAME) throw badRequest(`name is too long (limit: ${MAX_NAME} characters)`);
      if ([...description].length > MAX_DESCRIPTION) {
        throw badRequest(`description is too long (limit: ${MAX_DESCRIPTION} characters)`);
      }
      if (
        core.data.channelFolders.some((f) => f.name.toLowerCase() === name.toLowerCase() && !f.is_archived)
      ) {
        throw badRequest(`Channel folder name already in use`);
      }
      const id = nextId(core.data, "folder");
      const folder = {
        id,
        name,
        description,
        rendered_description: renderDescription(core.data, description, core.clock.now()),
        order: id,
        creator_id: user.user_id,
        date_created: core.clock.seconds(),
        is_archived: false,
      };
      core.data.channelFolders.push(folder);
      emitToAll(core, { type: "channel_folder", op: "add", channel_folder: { ...folder } });
      return { channel_folder_id: id };
    }),
  }),
  route("/channel_folders", {
    GET: endpoint(({ core, params }) => {
      const includeArchived = params.bool("include_archived") ?? false;
      return {
        channel_folders: core.data.channelFolders
          .filter((f) => includeArchived || !f.is_archived)
          .map((f) => ({ ...f })),
      };
    }),
  }),
];
